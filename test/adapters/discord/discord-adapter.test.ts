import { describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/index.js";
import { DISCORD_BOT, WORLD, dmChannelOf } from "../../fakes/fake-discord-server.js";
import { useDiscordHarness } from "./discord-harness.js";

const harness = useDiscordHarness();
const general = { channel: "discord", to: WORLD.general };
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as DeliveryError,
  );

describe("createDiscordAdapter: start and stop", () => {
  it("overwrites the slash commands in one call at start, each with an optional input", async () => {
    const h = await harness({
      commands: [
        { name: "status", summary: "Show the session" },
        { name: "Bad Name", summary: "x" },
      ],
    });
    expect(h.fake.commandPuts).toHaveLength(1);
    expect(h.fake.commandPuts[0]!.path).toBe(`/applications/${DISCORD_BOT.applicationId}/commands`);
    expect(h.fake.commandPuts[0]!.body).toEqual([
      {
        name: "status",
        description: "Show the session",
        options: [expect.objectContaining({ name: "input", type: 3, required: false })],
      },
    ]);
  });

  it("registers per guild when commandGuilds is set, and clears the list when native commands are off", async () => {
    const perGuild = await harness({
      config: { commandGuilds: [WORLD.guild] },
      commands: [{ name: "help", summary: "h" }],
    });
    expect(perGuild.fake.commandPuts.map((p) => p.path)).toEqual([
      `/applications/${DISCORD_BOT.applicationId}/guilds/${WORLD.guild}/commands`,
    ]);
    const off = await harness({ config: { nativeCommands: false }, commands: [{ name: "help", summary: "h" }] });
    expect(off.fake.commandPuts[0]!.body).toEqual([]);
  });

  it("fails the start on a rejected token with where to get a new one, never logging the token", async () => {
    const h = await harness({ start: false, config: { token: "Bot wrong.token" } });
    await expect(h.start()).rejects.toThrow(/Discord rejected the bot token of channels\.discord .*developer portal/);
    expect(h.fake.connections()).toBe(0);
    expect(JSON.stringify(h.logger.records)).not.toContain("wrong.token");
  });

  it("fails the start when the gateway refuses the Message Content intent (4014), saying where to switch it on", async () => {
    const h = await harness({ start: false, fake: { refuseMessageContent: true } });
    await expect(h.start()).rejects.toThrow(/Privileged Gateway Intents > Message Content Intent/);
    await expect.poll(() => h.fake.connections()).toBe(0);
  });

  it("takes the token from DISCORD_BOT_TOKEN with a pasted 'Bot ' prefix and keeps it out of the logs", async () => {
    const h = await harness({ config: { token: undefined }, env: { DISCORD_BOT_TOKEN: `Bot ${DISCORD_BOT.token}` } });
    await h.adapter.send(general, { text: "hi" });
    expect(h.fake.sent).toHaveLength(1);
    expect(JSON.stringify(h.logger.records)).not.toContain(DISCORD_BOT.token);
  });

  it("runs one bot per account and sends with the bot of the target's account", async () => {
    const work = {
      token: "MTIz.work.token",
      user: { id: "900000000000000011", username: "workbot" },
      applicationId: "900000000000000012",
    };
    const h = await harness({
      fake: { bots: [DISCORD_BOT, work] },
      config: { accounts: { work: { token: work.token } } },
    });
    expect(h.fake.connections()).toBe(2);
    await h.adapter.send({ ...general, accountId: "work" }, { text: "from work" });
    await h.adapter.send({ ...general, accountId: "default" }, { text: "from default" });
    expect(h.fake.sent.map((s) => [s.by, s.content])).toEqual([
      [work.user.id, "from work"],
      [DISCORD_BOT.user.id, "from default"],
    ]);
    const err = await failure(h.adapter.send({ ...general, accountId: "other" }, { text: "x" }));
    expect(err).toMatchObject({ retryable: false, reason: "no_account" });
  });

  it("closes its gateway connection on stop", async () => {
    const h = await harness();
    expect(h.fake.connections()).toBe(1);
    await h.adapter.stop();
    await expect.poll(() => h.fake.connections()).toBe(0);
  });
});

describe("createDiscordAdapter: inbound", () => {
  it("hands messages to the sink in order and drops its own and other bots' messages and slash leftovers", async () => {
    const h = await harness();
    const bot = { ...DISCORD_BOT.user, discriminator: "0", avatar: null, bot: true };
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "one" }));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "mine", author: bot }));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "beep", author: { ...WORLD.otherBot } }));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "Send policy: off", type: 20, author: bot }));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("two"));
    h.fake.dispatch(
      "MESSAGE_CREATE",
      h.fake.message({ channel_id: WORLD.thread, content: `<@${DISCORD_BOT.user.id}> three` }),
    );
    // Messages reach the sink in order: once a last one arrived, every one dispatched before it has, or was dropped.
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("last"));
    await h.waitForReceived(4);
    expect(
      h.received.map((r) => [r.message.chat.type, r.message.chat.id, r.message.text, r.message.wasMentioned]),
    ).toEqual([
      ["channel", WORLD.general, "one", false],
      ["direct", dmChannelOf(WORLD.ada.id), "two", false],
      ["channel", WORLD.thread, "three", true],
      ["direct", dmChannelOf(WORLD.ada.id), "last", false],
    ]);
    expect(h.received[2]!.message.chat).toMatchObject({ parentId: WORLD.general, title: "#general › bug-triage" });
  });

  it("logs a malformed message by name and keeps taking the next one", async () => {
    const h = await harness();
    const { author: _author, ...noAuthor } = h.fake.message({ content: "who wrote this?" });
    h.fake.dispatch("MESSAGE_CREATE", noAuthor);
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "fine" }));
    expect((await h.waitForReceived(1))[0]!.message.text).toBe("fine");
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        message: "malformed discord message ignored",
        fields: expect.objectContaining({ err: expect.stringMatching(/author/) }),
      }),
    );
  });

  it("answers other bots when allowBots is set", async () => {
    const h = await harness({ config: { allowBots: true } });
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "beep", author: { ...WORLD.otherBot } }));
    expect((await h.waitForReceived(1))[0]!.message.sender.id).toBe(WORLD.otherBot.id);
  });

  it("logs a message the core could not store, tries it again, and hands the next after it", async () => {
    let refuse = true;
    const h = await harness({
      beforeReceive: async () => {
        if (refuse) {
          refuse = false;
          throw new Error("disk full");
        }
      },
    });
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "refused once" }));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.message({ content: "kept" }));
    expect((await h.waitForReceived(2)).map((r) => r.message.text)).toEqual(["refused once", "kept"]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("discord message not stored") }),
    );
  });
});

describe("createDiscordAdapter: slash commands", () => {
  it("defers ephemerally at once and hands the command over with its chat and an interaction", async () => {
    const h = await harness();
    const slash = h.fake.slash("send", "off", { channelId: WORLD.thread });
    h.fake.dispatch("INTERACTION_CREATE", slash);
    const [{ message, interaction }] = (await h.waitForReceived(1)) as [(typeof h.received)[0]];
    expect(h.fake.interactions[0]).toEqual({ interactionId: slash.id, kind: "defer", ephemeral: true });
    expect(message).toMatchObject({
      chat: { type: "channel", id: WORLD.thread, parentId: WORLD.general },
      sender: { id: WORLD.ada.id },
      command: { name: "send", args: "off" },
      text: "/send off",
    });
    expect(interaction).toBeDefined();
  });

  it("answers ephemerally in place, and publicly by replacing the placeholder with a public follow-up", async () => {
    const h = await harness();
    h.fake.dispatch("INTERACTION_CREATE", h.fake.slash("help", undefined));
    h.fake.dispatch("INTERACTION_CREATE", h.fake.slash("send", "off"));
    const [help, send] = await h.waitForReceived(2);
    await help!.interaction!.reply("only you see this", { ephemeral: true });
    await send!.interaction!.reply("Send policy set to off.");
    const calls = h.fake.interactions.map(({ kind, content, ephemeral }) => ({ kind, content, ephemeral }));
    expect(calls.filter((c) => c.kind !== "defer")).toEqual([
      { kind: "edit", content: "only you see this", ephemeral: false },
      { kind: "delete", content: undefined, ephemeral: false },
      { kind: "followup", content: "Send policy set to off.", ephemeral: false },
    ]);
    expect(h.fake.sent.map((s) => [s.channelId, s.content])).toEqual([[WORLD.general, "Send policy set to off."]]);
  });

  it("sends a long answer as follow-ups of at most 2000 characters and 17 lines", async () => {
    const h = await harness();
    h.fake.dispatch("INTERACTION_CREATE", h.fake.slash("status", undefined));
    const [status] = await h.waitForReceived(1);
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
    await status!.interaction!.reply(lines, { ephemeral: true });
    const answers = h.fake.interactions.filter((c) => c.kind === "edit" || c.kind === "followup");
    expect(answers.map((a) => a.kind)).toEqual(["edit", "followup", "followup"]);
    expect(answers.slice(1).every((a) => a.ephemeral)).toBe(true);
    expect(answers.every((a) => a.content!.split("\n").length <= 17)).toBe(true);
    expect(answers.map((a) => a.content).join("\n")).toBe(lines);
  });

  it("logs an expired interaction (10062) once and does not retry it", async () => {
    const h = await harness();
    const slash = h.fake.slash("status", undefined);
    h.fake.expireInteraction(slash.id);
    h.fake.dispatch("INTERACTION_CREATE", slash);
    const [status] = await h.waitForReceived(1);
    await status!.interaction!.reply("too late");
    expect(h.fake.interactions).toEqual([]);
    expect(h.logger.records.filter((r) => r.message.includes("expired"))).toHaveLength(1);
  });
});

describe("createDiscordAdapter: send", () => {
  it("splits a 30-line message into pieces of at most 17 lines, closing and reopening a code fence", async () => {
    const h = await harness();
    const code = ["```ts", ...Array.from({ length: 28 }, (_, i) => `const x${i} = ${i};`), "```"].join("\n");
    const { messageIds } = await h.adapter.send(general, { text: code });
    expect(messageIds).toHaveLength(2);
    const pieces = h.fake.sent.map((s) => s.content.split("\n"));
    expect(pieces.every((lines) => lines.length <= 17)).toBe(true);
    expect(pieces[0]!.at(-1)).toBe("```");
    expect(pieces[1]![0]).toBe("```ts");
    expect(pieces.every((lines) => lines.filter((l) => l.startsWith("```")).length === 2)).toBe(true);
  });

  it("quotes the answered message on the first piece with replyToMode first, every piece with all, never by default", async () => {
    const h = await harness({ config: { replyToMode: "first" } });
    await h.adapter.send(general, { text: "a", replyToMessageId: "123", part: { index: 0, count: 2 } });
    await h.adapter.send(general, { text: "b", replyToMessageId: "123", part: { index: 1, count: 2 } });
    expect(h.fake.sent.map((s) => s.referenceId)).toEqual(["123", undefined]);
    const all = await harness({ config: { replyToMode: "all" } });
    await all.adapter.send(general, { text: "a\n".repeat(20), replyToMessageId: "123" });
    expect(all.fake.sent.map((s) => s.referenceId)).toEqual(["123", "123"]);
    const off = await harness();
    await off.adapter.send(general, { text: "c", replyToMessageId: "123" });
    expect(off.fake.sent[0]!.referenceId).toBeUndefined();
  });

  it("lets user mentions in a reply notify, never @everyone or roles", async () => {
    const h = await harness();
    await h.adapter.send(general, { text: "@everyone look, <@600000000000000002>" });
    expect(h.fake.sent[0]!.pings).toEqual(["users"]);
  });

  it("opens the DM for a user:<id> target", async () => {
    const h = await harness();
    await h.adapter.send({ channel: "discord", to: `user:${WORLD.bob.id}` }, { text: "psst" });
    expect(h.fake.sent).toEqual([expect.objectContaining({ channelId: dmChannelOf(WORLD.bob.id), content: "psst" })]);
  });

  it("drops a resend of the same piece (same idempotency key) on the platform", async () => {
    const h = await harness();
    await h.adapter.send(general, { text: "once", idempotencyKey: "item-1#0" });
    await h.adapter.send(general, { text: "once", idempotencyKey: "item-1#0" });
    expect(h.fake.sent).toHaveLength(1);
  });

  it("waits out a short 429 itself, sends once, and logs the wait", async () => {
    const h = await harness();
    h.fake.rateLimitNext(1);
    await h.adapter.send(general, { text: "patience" });
    expect(h.fake.sent.map((s) => s.content)).toEqual(["patience"]);
    expect(h.fake.rateLimits).toEqual([1]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringMatching(/discord rate limit/) }),
    );
  });

  it.each([
    ["a user who blocks DMs (50007)", { to: `user:${WORLD.bob.id}` }, "blocked", /does not accept DMs/],
    ["a channel without permission (50013)", { to: WORLD.locked }, "missing_permissions", /missing SendMessages/],
    ["an unknown channel (10003)", { to: "channel:700000000000000099" }, "chat_not_found", /does not know/],
  ])("reports %s as a final failure that says why", async (_, target, reason, text) => {
    const h = await harness();
    h.fake.blockDms(WORLD.bob.id);
    const err = await failure(h.adapter.send({ channel: "discord", ...target }, { text: "hello" }));
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({ retryable: false, reason });
    expect(err!.message).toMatch(text);
  });

  it("leaves a 5xx to the delivery gate's backoff (retryable, not retried inside)", async () => {
    const h = await harness();
    h.fake.failNext({ status: 502, code: 0, message: "Bad Gateway" });
    const err = await failure(h.adapter.send(general, { text: "x" }));
    expect(err).toMatchObject({ retryable: true, reason: "server_error" });
    await h.adapter.send(general, { text: "x" });
    expect(h.fake.sent).toHaveLength(1);
  });

  it("shows typing at most once per renewal interval per channel", async () => {
    const h = await harness();
    await h.adapter.typing(general);
    await h.adapter.typing(general);
    await h.adapter.typing({ channel: "discord", to: WORLD.thread });
    expect(h.fake.typing).toEqual([WORLD.general, WORLD.thread]);
  });
});
