// End to end: the real gateway with the real discord.js client (through createConfiguredAdapters)
// against the fake Discord: what users see is what reached the fake; where it went is what
// sessions.list shows.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_BOT, type FakeDiscord, WORLD, dmChannelOf, startFakeDiscord } from "../fakes/fake-discord-server.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { startPlatformGateway } from "../support/platform-gateway.js";
import { RESEARCH_ANNOUNCE, researchSpawn } from "../support/research-spawn.js";
import { type TestGateway, tempHome } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MENTION = `<@${DISCORD_BOT.user.id}>`;
const BOT_MENTIONED = { mentions: [{ ...DISCORD_BOT.user, discriminator: "0", avatar: null, bot: true }] };

async function fakeDiscord(options: Parameters<typeof startFakeDiscord>[0] = {}): Promise<FakeDiscord> {
  const fake = await startFakeDiscord(options);
  cleanups.push(fake.close);
  return fake;
}

interface GatewayOptions {
  home?: string;
  model?: LanguageModel;
  models?: Record<string, LanguageModel>;
  /** config besides channels */
  config?: Record<string, unknown>;
  /** `channels.discord` fields besides the token, the fake's apiRoot and Ada as owner */
  discord?: Record<string, unknown>;
}

/** A gateway with Ada as owner (DMs and guild) and the Discord adapter the CLI would create. */
async function gateway(fake: FakeDiscord, options: GatewayOptions = {}): Promise<TestGateway> {
  const home = options.home ?? (await tempHome());
  const discord = {
    token: DISCORD_BOT.token,
    apiRoot: fake.apiRoot,
    allowFrom: [WORLD.ada.id],
    owners: [WORLD.ada.id],
    groupAllowFrom: ["@ada", "@bob"],
    ...options.discord,
  };
  const gw = await startPlatformGateway({ ...options, home, channel: { id: "discord", settings: discord } });
  cleanups.push(gw.close);
  return gw;
}

/** After `/send off` in #general (its answer the one message sent): a mention there is answered in the session, and nothing more is sent. */
async function expectSilenced(fake: FakeDiscord, gw: TestGateway): Promise<void> {
  fake.dispatch("MESSAGE_CREATE", fake.message({ content: `${MENTION} anyone?`, ...BOT_MENTIONED }));
  const client = await gw.client();
  const history = async () =>
    (
      await client.call<{ messages: Array<{ role: string }> }>("chat.history", {
        sessionKey: `agent:main:discord:channel:${WORLD.general}`,
      })
    ).messages.length;
  // The mention reached the session and its turn ran (4 entries), yet its answer was not sent.
  await expect.poll(history, { timeout: 15_000 }).toBe(4);
  await gw.gateway.core.gate.idle();
  expect(fake.sent).toHaveLength(1);
}

async function sessions(gw: TestGateway) {
  const client = await gw.client();
  const { sessions } = await client.call<{
    sessions: Array<{ key: string; displayName?: string; origin?: Record<string, unknown> }>;
  }>("sessions.list", {});
  return sessions.sort((a, b) => a.key.localeCompare(b.key));
}

const where = (fake: FakeDiscord) => fake.sent.map((s) => ({ channelId: s.channelId, content: s.content }));

describe("Discord through the gateway", () => {
  it("answers a DM, a guild mention and a thread each in place, ignores a guild message without a mention, and gives the thread its own session", async () => {
    const fake = await fakeDiscord();
    const gw = await gateway(fake);
    fake.dispatch("MESSAGE_CREATE", fake.dm("hello in private"));
    fake.dispatch("MESSAGE_CREATE", fake.message({ content: "chatting without the bot" }));
    fake.dispatch("MESSAGE_CREATE", fake.message({ content: `${MENTION} hello guild`, ...BOT_MENTIONED }));
    fake.dispatch(
      "MESSAGE_CREATE",
      fake.message({ channel_id: WORLD.thread, content: `${MENTION} hello thread`, ...BOT_MENTIONED }),
    );
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(3);
    // Three chats, three sessions: their turns run side by side, so their replies have no order between them.
    expect(where(fake)).toEqual(
      expect.arrayContaining([
        { channelId: dmChannelOf(WORLD.ada.id), content: "Echo: hello in private" },
        { channelId: WORLD.general, content: "Echo: hello guild" },
        { channelId: WORLD.thread, content: "Echo: hello thread" },
      ]),
    );
    const list = await sessions(gw);
    expect(list.map((s) => s.key)).toEqual([
      `agent:main:discord:channel:${WORLD.general}`,
      `agent:main:discord:channel:${WORLD.thread}`,
      "agent:main:main",
    ]);
    expect(list[1]).toMatchObject({
      displayName: expect.stringContaining("general"),
      origin: { parentId: WORLD.general, label: "#general › bug-triage" },
    });
  });

  it("delivers a 2,500-character reply as two messages and a 30-line reply in pieces of at most 17 lines", async () => {
    const fake = await fakeDiscord();
    const long = Array.from({ length: 500 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
    const tall = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    await gateway(fake, { model: createScriptedModel([{ text: long }, { text: tall }]) });
    fake.dispatch("MESSAGE_CREATE", fake.dm("tell me everything"));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(2);
    expect(fake.sent.every((s) => s.content.length <= 2000)).toBe(true);
    expect(fake.sent.map((s) => s.content).join(" ")).toBe(long);
    fake.dispatch("MESSAGE_CREATE", fake.dm("now in lines"));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(4);
    const pieces = fake.sent.slice(2).map((s) => s.content);
    expect(pieces.every((p) => p.split("\n").length <= 17)).toBe(true);
    expect(pieces.join("\n")).toBe(tall);
  });

  it("fills the first message of a long offline echo instead of sending 'Echo:' alone", async () => {
    const fake = await fakeDiscord();
    await gateway(fake);
    const word = "x".repeat(2500);
    fake.dispatch("MESSAGE_CREATE", fake.dm(word));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(2);
    expect(fake.sent.map((s) => s.content)).toEqual([`Echo: ${word.slice(0, 1994)}`, word.slice(1994)]);
  });

  it("waits out a 429 and delivers the reply once", async () => {
    const fake = await fakeDiscord();
    const gw = await gateway(fake);
    fake.rateLimitNext(1);
    fake.dispatch("MESSAGE_CREATE", fake.dm("are you there?"));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(1);
    await gw.gateway.core.idle(); // the reply is delivered and nothing else is under way
    expect(fake.rateLimits).toEqual([1]);
    expect(where(fake)).toEqual([{ channelId: dmChannelOf(WORLD.ada.id), content: "Echo: are you there?" }]);
  });

  it("silences replies after the owner's typed /send off (no mention needed for an owner's command)", async () => {
    const fake = await fakeDiscord();
    const gw = await gateway(fake);
    // An owner's command needs no mention in a server.
    fake.dispatch("MESSAGE_CREATE", fake.message({ content: "/send off" }));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(1);
    expect(fake.sent[0]!.content).toMatch(/^Send policy set to off\./);
    await expectSilenced(fake, gw);
  });

  it("shows typing in the channel while the turn runs", async () => {
    const fake = await fakeDiscord();
    await gateway(fake, { model: createScriptedModel([{ text: "thought about it", delayMs: 300 }]) });
    fake.dispatch("MESSAGE_CREATE", fake.dm("think"));
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(1);
    expect(fake.typing).toContain(dmChannelOf(WORLD.ada.id));
  });

  it.each([
    ["a thread", "thread"],
    ["a DM", "dm"],
  ] as const)("announces a sub-agent spawned from %s back into it", async (_, place) => {
    const fake = await fakeDiscord();
    const { models, agents } = researchSpawn();
    await gateway(fake, {
      models,
      config: { agents },
      discord: { guilds: { [WORLD.guild]: { channels: { [WORLD.general]: { requireMention: false } } } } },
    });
    const channelId = place === "thread" ? WORLD.thread : dmChannelOf(WORLD.ada.id);
    fake.dispatch(
      "MESSAGE_CREATE",
      place === "thread"
        ? fake.message({ channel_id: WORLD.thread, content: "please research X" })
        : fake.dm("please research X"),
    );
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(2);
    expect(where(fake)[0]).toEqual({ channelId, content: "on it" });
    expect(fake.sent[1]!.channelId).toBe(channelId);
    expect(fake.sent[1]!.content).toMatch(RESEARCH_ANNOUNCE);
  });

  it("fails the start when Discord refuses the Message Content intent, with the README's hint, and frees the port", async () => {
    const fake = await fakeDiscord({ refuseMessageContent: true });
    const home = await tempHome();
    await expect(gateway(fake, { home })).rejects.toThrow(/Privileged Gateway Intents > Message Content Intent/);
    const readme = readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");
    expect(readme).toContain("Privileged Gateway Intents > Message Content Intent");
    expect(fake.connections()).toBe(0);
    // The state lock was released: the same home starts again once Discord accepts the intent.
    const accepting = await fakeDiscord();
    await expect(gateway(accepting, { home })).resolves.toBeDefined();
  });

  it("runs the owner's /send off slash command on the channel's session and answers it publicly", async () => {
    const fake = await fakeDiscord();
    const gw = await gateway(fake, { config: { commands: { native: true } } });
    expect(fake.commandPuts[0]!.body).toContainEqual(expect.objectContaining({ name: "send" }));
    const slash = fake.slash("send", "off");
    fake.dispatch("INTERACTION_CREATE", slash);
    await expect.poll(() => fake.sent.length, { timeout: 15_000 }).toBe(1);
    expect(fake.sent[0]).toMatchObject({
      channelId: WORLD.general,
      content: expect.stringMatching(/^Send policy set to off\./),
    });
    // Answered through the interaction: the private placeholder is replaced by a public follow-up.
    expect(fake.interactions.map(({ kind, ephemeral }) => [kind, ephemeral])).toEqual([
      ["defer", true],
      ["delete", false],
      ["followup", false],
    ]);
    await expectSilenced(fake, gw);
  });

  it("refuses a non-owner's /send off slash command privately and changes nothing", async () => {
    const fake = await fakeDiscord();
    const gw = await gateway(fake);
    const slash = fake.slash("send", "off", { user: WORLD.bob });
    fake.dispatch("INTERACTION_CREATE", slash);
    await expect
      .poll(() => fake.interactions.filter((c) => c.kind !== "defer"), { timeout: 15_000 })
      .toEqual([expect.objectContaining({ interactionId: slash.id, kind: "edit", content: expect.any(String) })]);
    expect(fake.interactions[0]).toMatchObject({ kind: "defer", ephemeral: true });
    expect(fake.sent).toEqual([]);
    fake.dispatch("MESSAGE_CREATE", fake.message({ content: `${MENTION} still there?`, ...BOT_MENTIONED }));
    await expect.poll(() => fake.sent.map((s) => s.content), { timeout: 15_000 }).toEqual(["Echo: still there?"]);
    await gw.gateway.core.gate.idle();
  });
});
