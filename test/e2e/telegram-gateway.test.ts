// End to end: the real gateway with the real grammy bot (through createConfiguredAdapters) against the
// fake Bot API: what users see is what reached the fake; where it went is what sessions.list shows.
// Every case runs on both state backends; on PostgreSQL the home keeps no state file.
import type { LanguageModel } from "ai";
import type { Update } from "grammy/types";
import { afterEach, expect, it } from "vitest";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { startPlatformGateway } from "../support/platform-gateway.js";
import { type BackendHome, type StateBackend, describeBackends, stateFilesIn } from "../support/state-backends.js";
import type { TestGateway } from "../support/test-gateway.js";
import { RESEARCH_ANNOUNCE, researchSpawn } from "../support/research-spawn.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ADA = { id: 111, is_bot: false, first_name: "Ada", username: "ada" } as const;
const GROUP = { id: -1001234567890, type: "supergroup", title: "Team Chat" } as const;
const FORUM = { id: -1002000000001, type: "supergroup", title: "Project Forum", is_forum: true } as const;
const MENTION = "@SwitchboardTestBot";
let nextMessageId = 100;

function message(
  chat: Record<string, unknown>,
  text: string,
  extra: Record<string, unknown> = {},
): Omit<Update, "update_id"> {
  const mention = text.startsWith(MENTION)
    ? { entities: [{ type: "mention", offset: 0, length: MENTION.length }] }
    : {};
  return {
    message: { message_id: nextMessageId++, date: 1767225600, chat, from: ADA, text, ...mention, ...extra },
  } as unknown as Omit<Update, "update_id">;
}
const dm = (text: string) => message({ id: 111, type: "private", first_name: "Ada", username: "ada" }, text);
const topic = (text: string, threadId: number) =>
  message(FORUM, text, { message_thread_id: threadId, is_topic_message: true });

async function fakeTelegram(options: { forgetConfirmed?: boolean } = {}): Promise<FakeTelegramServer> {
  const fake = await startFakeTelegramServer(options);
  cleanups.push(fake.close);
  return fake;
}

interface GatewayOptions {
  /** the home and its state (default a new one on the test's backend) */
  at?: BackendHome;
  model?: LanguageModel;
  models?: Record<string, LanguageModel>;
  /** config besides channels */
  config?: Record<string, unknown>;
  /** `channels.telegram` fields besides the token, the fake's apiRoot and Ada as owner */
  telegram?: Record<string, unknown>;
}

/** A gateway on `at` with Ada (111) as owner in DMs and allowed in groups, and the Telegram adapter the CLI would create. */
async function telegramGateway(
  at: BackendHome,
  fake: FakeTelegramServer,
  options: GatewayOptions,
): Promise<TestGateway> {
  const telegram = {
    botToken: TEST_BOT.token,
    apiRoot: fake.apiRoot,
    allowFrom: ["111"],
    owners: ["111"],
    groupAllowFrom: ["@ada"],
    ...options.telegram,
  };
  const config = { ...options.config, ...(at.state && { state: at.state }) };
  const gw = await startPlatformGateway({
    ...options,
    config,
    home: at.home,
    channel: { id: "telegram", settings: telegram },
  });
  cleanups.push(gw.close);
  return gw;
}

async function sessionKeys(gw: TestGateway): Promise<string[]> {
  const client = await gw.client();
  const { sessions } = await client.call<{ sessions: Array<{ key: string }> }>("sessions.list", {});
  return sessions.map((s) => s.key).sort();
}

const where = (fake: FakeTelegramServer) =>
  fake.sent.map((s) => ({ chatId: s.chatId, threadId: s.threadId, text: s.text }));

/**
 * A new home on `backend`; on PostgreSQL, once its gateways stopped, it holds no state file (only
 * config, logs, lock). RED until the Telegram offset moves to PostgreSQL (helper "chanstate").
 */
async function newHome(backend: StateBackend): Promise<BackendHome> {
  const at = await backend.home();
  if (backend.name === "postgres") cleanups.push(async () => expect(await stateFilesIn(at.home)).toEqual([]));
  return at;
}

describeBackends("Telegram through the gateway", (backend) => {
  const gateway = async (fake: FakeTelegramServer, options: GatewayOptions = {}) =>
    telegramGateway(options.at ?? (await newHome(backend)), fake, options);

  it("routes a DM (to the main session by default), a group mention, a forum topic and the General topic to their sessions and answers each in place", async () => {
    const fake = await fakeTelegram();
    const gw = await gateway(fake);
    fake.push(dm("hello in private"));
    fake.push(message(GROUP, "chatting without the bot"));
    fake.push(message(GROUP, `${MENTION} hello group`));
    fake.push(topic(`${MENTION} hello topic`, 42));
    fake.push(message(FORUM, `${MENTION} hello general`));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(4);
    // Four sessions: their turns run side by side, so their replies have no order between them.
    expect(where(fake)).toEqual(
      expect.arrayContaining([
        { chatId: "111", threadId: undefined, text: "Echo: hello in private" },
        // The adapter strips its own leading mention: the agent reads the message without it.
        { chatId: "-1001234567890", threadId: undefined, text: "Echo: hello group" },
        { chatId: "-1002000000001", threadId: 42, text: "Echo: hello topic" },
        { chatId: "-1002000000001", threadId: undefined, text: "Echo: hello general" },
      ]),
    );
    expect(await sessionKeys(gw)).toEqual([
      "agent:main:main",
      "agent:main:telegram:group:-1001234567890",
      "agent:main:telegram:group:-1002000000001:topic:1",
      "agent:main:telegram:group:-1002000000001:topic:42",
    ]);
  });

  it("delivers a 5,000-character reply as two messages in order", async () => {
    const fake = await fakeTelegram();
    const long = Array.from({ length: 1000 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
    await gateway(fake, { model: createScriptedModel([{ text: long }]) });
    fake.push(dm("tell me everything"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent.every((s) => s.chatId === "111" && s.text.length <= 4000)).toBe(true);
    expect(fake.sent.map((s) => s.text).join(" ")).toBe(long);
  });

  it("fills the first message of a long offline echo instead of sending 'Echo:' alone", async () => {
    const fake = await fakeTelegram();
    await gateway(fake);
    const word = "x".repeat(5000);
    fake.push(dm(word));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent.map((s) => s.text)).toEqual([`Echo: ${word.slice(0, 3994)}`, word.slice(3994)]);
  });

  it("waits out a 429 for retry_after and delivers the reply once", async () => {
    const fake = await fakeTelegram();
    await gateway(fake);
    fake.failNext("sendMessage", {
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    fake.push(dm("are you there?"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const attempts = fake.callsTo("sendMessage");
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.body.text).toBe(attempts[0]!.body.text);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
    expect(fake.sent[0]!.text).toBe("Echo: are you there?");
  });

  it("silences the next reply after the owner's /send off, while the turn still runs", async () => {
    const fake = await fakeTelegram();
    const gw = await gateway(fake);
    fake.push(dm("/send off"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]!.text).toMatch(/^Send policy set to off\./);
    fake.push(dm("anyone?"));
    const client = await gw.client();
    await expect
      .poll(
        async () =>
          (
            await client.call<{ messages: Array<{ role: string; command?: true }> }>("chat.history", {
              sessionKey: "agent:main:main",
            })
          ).messages.map((m) => `${m.role}${m.command ? " (command)" : ""}`),
        { timeout: 10_000 },
      )
      .toEqual(["user (command)", "assistant (command)", "user", "assistant"]);
    await gw.gateway.core.gate.idle();
    expect(fake.sent).toHaveLength(1);
  });

  it("answers /cmd@ThisBot in a group and leaves /cmd@OtherBot alone", async () => {
    const fake = await fakeTelegram();
    await gateway(fake);
    const command = (text: string) =>
      message(GROUP, text, { entities: [{ type: "bot_command", offset: 0, length: text.length }] });
    fake.push(command("/status@OtherBot"));
    fake.push(command("/status@SwitchboardTestBot"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect(fake.sent[0]).toMatchObject({ chatId: "-1001234567890" });
    expect(fake.sent[0]!.text).toContain("agent:main:telegram:group:-1001234567890");
  });

  it("shows typing while the turn runs and quotes the message it answers", async () => {
    const fake = await fakeTelegram();
    await gateway(fake, { model: createScriptedModel([{ text: "thought about it", delayMs: 200 }]) });
    const update = topic(`${MENTION} think`, 42);
    fake.push(update);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const typing = fake.callsTo("sendChatAction")[0]!;
    expect(typing.body).toEqual({ chat_id: "-1002000000001", action: "typing", message_thread_id: 42 });
    expect(typing.at).toBeLessThanOrEqual(fake.callsTo("sendMessage")[0]!.at);
    expect(fake.sent[0]!.replyTo).toBe((update.message as { message_id: number }).message_id);
  });

  it("serves a webhook on the gateway's port and fails a start with a rejected token without holding the port", async () => {
    const fake = await fakeTelegram();
    const gw = await gateway(fake, {
      telegram: { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret" },
    });
    const base = gw.gateway.url.replace(/^ws/, "http");
    const update = { update_id: 1, ...dm("via webhook") };
    const response = await fetch(`${base}/telegram-webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret" },
      body: JSON.stringify(update),
    });
    expect(response.status).toBe(200);
    await expect.poll(() => fake.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["Echo: via webhook"]);
    await expect(gateway(fake, { telegram: { botToken: "999:WRONG" } })).rejects.toThrow(/rejected the bot token/);
  });

  it("does not replay an update it handled before a restart", async () => {
    const fake = await fakeTelegram({ forgetConfirmed: false });
    const at = await newHome(backend);
    const first = await gateway(fake, { at });
    fake.push(dm("before the restart"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    await first.close();
    cleanups.splice(cleanups.indexOf(first.close), 1);
    const pollsBefore = fake.callsTo("getUpdates").length;
    fake.push(dm("after the restart"));
    await gateway(fake, { at });
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: before the restart", "Echo: after the restart"]);
    expect(fake.callsTo("getUpdates")[pollsBefore]!.body.offset).toBe(2);
  });

  it("announces a sub-agent spawned from a forum topic into that topic", async () => {
    const fake = await fakeTelegram();
    const { models, agents } = researchSpawn();
    await gateway(fake, {
      models,
      config: { agents },
      telegram: { groups: { [String(FORUM.id)]: { requireMention: false } } },
    });
    fake.push(topic("please research X", 7));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(where(fake)[0]).toEqual({ chatId: "-1002000000001", threadId: 7, text: "on it" });
    expect(fake.sent[1]).toMatchObject({ chatId: "-1002000000001", threadId: 7 });
    expect(fake.sent[1]!.text).toMatch(RESEARCH_ANNOUNCE);
  });
});
