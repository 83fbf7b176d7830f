import { describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/index.js";
import { type FakeFailure, TEST_BOT } from "../../fakes/fake-telegram-server.js";
import { useTelegramHarness } from "./telegram-harness.js";

const harness = useTelegramHarness();

const FORUM = "-1002000000001";
const WORK_BOT = { token: "777:WORK", info: { ...TEST_BOT.info, id: 777, username: "WorkBot" } };
/** The DeliveryError a send fails with (the test fails if it succeeds). */
const rejection = (sending: Promise<unknown>): Promise<DeliveryError> =>
  sending.then(
    () => expect.fail("the send should have failed"),
    (error: unknown) => error as DeliveryError,
  );

describe("createTelegramAdapter send", () => {
  it("sends Markdown as Telegram HTML", async () => {
    const { adapter, fake } = await harness();
    await adapter.send({ channel: "telegram", to: "111" }, { text: "**done** with `x<y`" });
    expect(fake.callsTo("sendMessage")[0]!.body).toMatchObject({
      chat_id: "111",
      parse_mode: "HTML",
      text: "<b>done</b> with <code>x&lt;y</code>",
    });
    expect(fake.sent[0]!.text).toBe("done with x<y");
  });

  it.each([
    ["a forum topic", { to: FORUM, threadId: "42" }, 42],
    ["the General topic", { to: FORUM, threadId: "1" }, undefined],
    ["a DM thread", { to: "111", threadId: 77 }, 77],
    ["an announce target with a topic suffix", { to: `telegram:${FORUM}:topic:9` }, 9],
    ["a plain group", { to: "-1001234567890" }, undefined],
  ])("sets message_thread_id for %s as Telegram needs it", async (_name, target, threadId) => {
    const { adapter, fake } = await harness();
    await adapter.send({ channel: "telegram", ...target }, { text: "hi" });
    expect(fake.callsTo("sendMessage")[0]!.body.message_thread_id).toBe(threadId);
    expect(fake.sent).toHaveLength(1);
  });

  it("quotes the answered message, and not with replyToMode off", async () => {
    const quoting = await harness();
    await quoting.adapter.send({ channel: "telegram", to: "111" }, { text: "answer", replyToMessageId: "10" });
    expect(quoting.fake.callsTo("sendMessage")[0]!.body.reply_parameters).toEqual({
      message_id: 10,
      allow_sending_without_reply: true,
    });
    const silent = await harness({ config: { replyToMode: "off" } });
    await silent.adapter.send({ channel: "telegram", to: "111" }, { text: "answer", replyToMessageId: "10" });
    expect(silent.fake.callsTo("sendMessage")[0]!.body).not.toHaveProperty("reply_parameters");
  });

  it("quotes only the first piece of a chunked reply with replyToMode first, and every piece with all", async () => {
    const piece = (index: number) => ({ text: `part ${index}`, replyToMessageId: "10", part: { index, count: 2 } });
    const first = await harness({ config: { replyToMode: "first" } });
    for (const i of [0, 1]) await first.adapter.send({ channel: "telegram", to: "111" }, piece(i));
    expect(first.fake.callsTo("sendMessage").map((c) => c.body.reply_parameters !== undefined)).toEqual([true, false]);
    const all = await harness({ config: { replyToMode: "all" } });
    for (const i of [0, 1]) await all.adapter.send({ channel: "telegram", to: "111" }, piece(i));
    expect(all.fake.callsTo("sendMessage").map((c) => c.body.reply_parameters !== undefined)).toEqual([true, true]);
  });

  it("resends the same chunk as plain text when Telegram cannot parse the HTML", async () => {
    const { adapter, fake, logger } = await harness();
    fake.failNext("sendMessage", {
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0',
    });
    const result = await adapter.send({ channel: "telegram", to: FORUM, threadId: "42" }, { text: "**raw** <text>" });
    const bodies = fake.callsTo("sendMessage").map((c) => c.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual({ chat_id: FORUM, text: "**raw** <text>", message_thread_id: 42 });
    expect(result.messageIds).toEqual([String(fake.sent[0]!.messageId)]);
    expect(logger.records.some((r) => r.message.includes("plain text"))).toBe(true);
  });

  it.each<[string, FakeFailure, Partial<DeliveryError>]>([
    [
      "a 429",
      { error_code: 429, description: "Too Many Requests: retry after 3", parameters: { retry_after: 3 } },
      { retryable: true, reason: "rate_limited", retryAfterMs: 3000 },
    ],
    [
      "a blocked bot",
      { error_code: 403, description: "Forbidden: bot was blocked by the user" },
      { retryable: false, reason: "blocked" },
    ],
    [
      "a kicked bot",
      { error_code: 403, description: "Forbidden: bot was kicked from the supergroup chat" },
      { retryable: false, reason: "forbidden" },
    ],
    [
      "a migrated group",
      {
        error_code: 400,
        description: "Bad Request: group chat was upgraded to a supergroup chat",
        parameters: { migrate_to_chat_id: -100999 },
      },
      { retryable: false, reason: "chat_migrated" },
    ],
    [
      "a deleted topic",
      { error_code: 400, description: "Bad Request: message thread not found" },
      { retryable: false, reason: "thread_not_found" },
    ],
    ["a server error", { error_code: 502, description: "Bad Gateway" }, { retryable: true, reason: "server_error" }],
    ["a dropped connection", "disconnect", { retryable: true, reason: "network" }],
  ])("turns %s into a DeliveryError the gate understands", async (_name, fail, expected) => {
    const { adapter, fake } = await harness();
    fake.failNext("sendMessage", fail);
    const error = await rejection(adapter.send({ channel: "telegram", to: "111" }, { text: "x" }));
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain(TEST_BOT.token);
  });

  it("explains a missing chat", async () => {
    const { adapter, fake } = await harness();
    fake.failNext("sendMessage", { error_code: 400, description: "Bad Request: chat not found" });
    const error = await rejection(adapter.send({ channel: "telegram", to: "-100404" }, { text: "x" }));
    expect(error.message).toMatch(/chat -100404 not found: the bot was never added/);
  });

  it("refuses a target that is not a chat", async () => {
    const { adapter, fake } = await harness();
    const error = await rejection(adapter.send({ channel: "telegram", to: "general" }, { text: "x" }));
    expect(error).toMatchObject({ retryable: false, reason: "bad_target" });
    expect(fake.callsTo("sendMessage")).toEqual([]);
  });
});

describe("createTelegramAdapter typing", () => {
  it("sends a typing action into the topic, General included", async () => {
    const { adapter, fake } = await harness();
    await adapter.typing({ channel: "telegram", to: FORUM, threadId: "1" });
    expect(fake.callsTo("sendChatAction")[0]!.body).toEqual({ chat_id: FORUM, action: "typing", message_thread_id: 1 });
  });

  it("never fails the caller", async () => {
    const { adapter, fake } = await harness();
    fake.failNext("sendChatAction", { error_code: 400, description: "Bad Request: chat not found" });
    await expect(adapter.typing({ channel: "telegram", to: "111" })).resolves.toBeUndefined();
  });
});

describe("createTelegramAdapter accounts", () => {
  it("routes each send through the bot of the target's account", async () => {
    const { adapter, fake } = await harness({
      bots: [TEST_BOT, WORK_BOT],
      config: { accounts: { work: { botToken: WORK_BOT.token } } },
    });
    await adapter.send({ channel: "telegram", to: "111", accountId: "work" }, { text: "from work" });
    await adapter.send({ channel: "telegram", to: "111" }, { text: "from default" });
    expect(fake.sent.map((s) => [s.token, s.text])).toEqual([
      [WORK_BOT.token, "from work"],
      [TEST_BOT.token, "from default"],
    ]);
  });

  it("fails a send for an account that is not running, for good", async () => {
    const { adapter } = await harness();
    const error = await rejection(adapter.send({ channel: "telegram", to: "111", accountId: "other" }, { text: "x" }));
    expect(error).toMatchObject({ retryable: false, reason: "no_account" });
  });

  it("refuses to start when Telegram rejects the token", async () => {
    const h = await harness({ config: { botToken: "999:WRONG" }, start: false });
    await expect(h.start()).rejects.toThrow(/Telegram rejected the bot token of channels\.telegram \(401/);
  });

  it("registers the command menu with setMyCommands unless nativeCommands is off", async () => {
    const commands = [
      { name: "status", summary: "Shows the session." },
      { name: "not-valid", summary: "x" },
    ];
    const on = await harness({ commands });
    await on.fake.waitFor("setMyCommands");
    expect(on.fake.callsTo("setMyCommands")[0]!.body.commands).toEqual([
      { command: "status", description: "Shows the session." },
    ]);
    const off = await harness({ commands, config: { nativeCommands: false } });
    await off.fake.waitFor("getUpdates");
    expect(off.fake.callsTo("setMyCommands")).toEqual([]);
  });
});
