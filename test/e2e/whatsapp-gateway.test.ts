// End to end: the real gateway with the WhatsApp adapter (through createConfiguredAdapters) on the
// fake socket: what users see is what reached the socket; where it went is what sessions.list shows.
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { type WhatsAppAdapter, createWhatsAppAdapter, defaultAuthDir } from "../../adapters/whatsapp/index.js";
import { type FakeWhatsApp, createFakeWhatsApp, linkDevice, waMessage } from "../fakes/fake-whatsapp.js";
import { type ManualClock, createManualClock } from "../fakes/manual-clock.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { startPlatformGateway } from "../support/platform-gateway.js";
import { type TestGateway, tempHome } from "../support/test-gateway.js";
import { ADA, ADA_JID, GROUP } from "../adapters/whatsapp/whatsapp-harness.js";
import { RESEARCH_ANNOUNCE, researchSpawn } from "../support/research-spawn.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BOT_MENTION = "@15550001111";
const dm = (text: string, key: Record<string, unknown> = {}) =>
  waMessage({ key: { remoteJid: ADA_JID, ...key }, message: { conversation: text }, pushName: "Ada" });
const inGroup = (text: string, mentioned = text.startsWith(BOT_MENTION)) =>
  waMessage({
    key: { remoteJid: GROUP, participant: ADA_JID },
    pushName: "Ada",
    message: {
      extendedTextMessage: { text, contextInfo: mentioned ? { mentionedJid: ["15550001111@s.whatsapp.net"] } : {} },
    },
  });

interface GatewayOptions {
  model?: LanguageModel;
  models?: Record<string, LanguageModel>;
  config?: Record<string, unknown>;
  whatsapp?: Record<string, unknown>;
  fake?: Parameters<typeof createFakeWhatsApp>[0];
  /** the reconnect timers: the adapter is then built as createConfiguredAdapters builds it, with these */
  timers?: ManualClock["timers"];
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A gateway with Ada (+15550009999) as owner, allowed in groups, and a linked device on the fake socket. */
async function gateway(
  options: GatewayOptions = {},
): Promise<{ gw: TestGateway; fake: FakeWhatsApp; whatsapp: WhatsAppAdapter }> {
  const home = await tempHome();
  await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp({ groups: { [GROUP]: "Family Chat" }, ...options.fake });
  const { timers } = options;
  const gw = await startPlatformGateway({
    ...options,
    home,
    channel: {
      id: "whatsapp",
      settings: { allowFrom: [ADA], owners: [ADA], groupAllowFrom: [ADA], ...options.whatsapp },
    },
    whatsappSocket: fake.factory,
    // With timers: built as createConfiguredAdapters builds it, with the reconnect timers it takes no option for.
    ...(timers && {
      adapters: (config, home) => [
        createWhatsAppAdapter(config.channels.whatsapp!, { home, logger: silent, socketFactory: fake.factory, timers }),
      ],
    }),
  });
  cleanups.push(gw.close);
  await expect.poll(() => fake.sockets.length).toBe(1);
  const whatsapp = gw.gateway.core.adapters.get("whatsapp") as WhatsAppAdapter;
  return { gw, fake, whatsapp };
}

async function sessionKeys(gw: TestGateway): Promise<string[]> {
  const client = await gw.client();
  const { sessions } = await client.call<{ sessions: Array<{ key: string }> }>("sessions.list", {});
  return sessions.map((s) => s.key).sort();
}

const texts = (fake: FakeWhatsApp) => fake.sent.map((s) => ({ jid: s.jid, text: s.text }));

describe("WhatsApp through the gateway", () => {
  it("answers a DM, a LID DM and a group mention in place, and ignores a group message without a mention", async () => {
    const { gw, fake } = await gateway({ whatsapp: { allowFrom: [ADA, "+15550003333"] } });
    fake.deliver([dm("hello in private")]);
    fake.deliver([
      waMessage({
        key: { remoteJid: "77770003333@lid", remoteJidAlt: "15550003333@s.whatsapp.net" },
        message: { conversation: "hello from a LID" },
      }),
    ]);
    fake.deliver([inGroup("chatting without the bot")]);
    fake.deliver([inGroup(`${BOT_MENTION} hello group`)]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(3);
    // Sessions run side by side: compare as a set.
    expect(texts(fake).sort((a, b) => a.text.localeCompare(b.text))).toEqual([
      { jid: "15550003333@s.whatsapp.net", text: "Echo: hello from a LID" },
      { jid: GROUP, text: "Echo: hello group" },
      { jid: ADA_JID, text: "Echo: hello in private" },
    ]);
    expect(await sessionKeys(gw)).toEqual(["agent:main:main", `agent:main:whatsapp:group:${GROUP}`]);
  });

  it("quotes the message it answers and gives the model the quoted text as context", async () => {
    const model = createScriptedModel([{ text: "about that note" }]);
    const { fake } = await gateway({ model });
    const reply = waMessage({
      key: { remoteJid: ADA_JID, id: "Q1" },
      message: {
        extendedTextMessage: {
          text: "what about this?",
          contextInfo: { stanzaId: "OLD1", participant: ADA_JID, quotedMessage: { conversation: "my earlier note" } },
        },
      },
    });
    fake.deliver([reply]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]).toMatchObject({ jid: ADA_JID, text: "about that note", quotedId: "Q1" });
    expect(JSON.stringify(model.calls[0])).toContain("my earlier note");
  });

  it("delivers a 5,000-character reply as two messages in order", async () => {
    const long = Array.from({ length: 1000 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
    const { fake } = await gateway({ model: createScriptedModel([{ text: long }]) });
    fake.deliver([dm("tell me everything")]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent.every((s) => s.jid === ADA_JID && s.text.length <= 4000)).toBe(true);
    expect(fake.sent.map((s) => s.text).join(" ")).toBe(long);
  });

  it("silences the next reply after the owner's /send off, while the turn still runs", async () => {
    const { gw, fake } = await gateway();
    fake.deliver([dm("/send off")]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]!.text).toMatch(/^Send policy set to off\./);
    fake.deliver([dm("anyone?")]);
    const client = await gw.client();
    await expect
      .poll(
        async () =>
          (await client.call<{ messages: Array<{ role: string }> }>("chat.history", { sessionKey: "agent:main:main" }))
            .messages.length,
        { timeout: 10_000 },
      )
      .toBe(4);
    await gw.gateway.core.gate.idle();
    expect(fake.sent).toHaveLength(1);
  });

  it("runs the owner's command after a leading mention of the bot in a group", async () => {
    const { fake } = await gateway();
    fake.deliver([inGroup(`${BOT_MENTION} /status`)]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]).toMatchObject({ jid: GROUP });
    expect(fake.sent[0]!.text).toContain(`agent:main:whatsapp:group:${GROUP}`);
  });

  it("shows in /status that the device is connected and when its credentials were last refreshed", async () => {
    const { fake } = await gateway();
    fake.deliver([dm("/status")]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]!.text).toMatch(/^Channel: whatsapp account default: connected · credentials last refreshed /m);
  });

  it("holds a reply while the connection is closed and delivers it once after the reconnect", async () => {
    const { gw, fake } = await gateway({ model: createScriptedModel([{ text: "worth the wait", delayMs: 300 }]) });
    fake.deliver([dm("slow question")]);
    await expect.poll(() => fake.presences.length, { timeout: 10_000 }).toBeGreaterThan(0);
    fake.close(428);
    await expect.poll(() => fake.sockets.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]).toMatchObject({ text: "worth the wait", socket: 1 });
    await gw.gateway.core.idle();
    expect(fake.sent).toHaveLength(1);
  });

  it("retries a send the socket failed with Connection Closed and delivers it once", async () => {
    const { gw, fake } = await gateway();
    fake.failNextSend("connection_closed");
    fake.deliver([dm("are you there?")]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    await gw.gateway.core.gate.idle();
    expect(texts(fake)).toEqual([{ jid: ADA_JID, text: "Echo: are you there?" }]);
  });

  it("reconnects after a dropped connection once the policy's first delay (2 s ± 25%) has passed", async () => {
    const clock = createManualClock();
    const { fake } = await gateway({ timers: clock.timers });
    fake.close(428);
    await expect.poll(() => clock.nextTimerAt()).toBeDefined();
    const delay = clock.nextTimerAt()! - clock.now();
    expect(delay).toBeGreaterThanOrEqual(1_500);
    expect(delay).toBeLessThanOrEqual(2_500);
    clock.advance(delay - 1);
    expect(fake.sockets).toHaveLength(1);
    clock.advance(1);
    expect(fake.sockets).toHaveLength(2);
  });

  it("stops on loggedOut with the relink message, keeps the gateway up and never reconnects", async () => {
    const clock = createManualClock();
    const { gw, fake, whatsapp } = await gateway({ timers: clock.timers });
    await expect.poll(() => whatsapp.accounts()[0]?.connected, { timeout: 10_000 }).toBe(true);
    fake.close(401, "Connection Failure");
    await expect.poll(() => whatsapp.accounts()[0]?.lastError).toContain("switchboard channels login whatsapp");
    // No reconnect is set, and past the longest reconnect delay (30 s) no new socket was made.
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.advance(60_000);
    expect(fake.sockets).toHaveLength(1);
    expect(await sessionKeys(gw)).toEqual([]);
  });

  it("announces a sub-agent spawned from a group into that group", async () => {
    const { models, agents } = researchSpawn();
    const { fake } = await gateway({
      models,
      config: { agents },
      whatsapp: { groups: { [GROUP]: { requireMention: false } } },
    });
    fake.deliver([inGroup("please research X")]);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[0]).toMatchObject({ jid: GROUP, text: "on it" });
    expect(fake.sent[1]).toMatchObject({ jid: GROUP });
    expect(fake.sent[1]!.text).toMatch(RESEARCH_ANNOUNCE);
  });
});
