import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createTelegramAdapter } from "../../../adapters/telegram/index.js";
import { TelegramConfigSchema } from "../../../adapters/telegram/telegram-config.js";
import { accountStates } from "../../../src/gateway/account-states.js";
import { SEND_ONLY_REASON, readinessReport } from "../../../src/gateway/readiness.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { TEST_BOT, adaDm } from "../../fakes/fake-telegram-server.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { useTelegramHarness } from "./telegram-harness.js";

const harness = useTelegramHarness();
const closers = closersAfterEach();
const WORK_BOT = { token: "777:WORK", info: { ...TEST_BOT.info, id: 777, username: "WorkBot" } };
const COMMANDS = [{ name: "status", summary: "Show the session" }];
/** the methods that receive or configure a bot: only the account's holder calls them */
const RECEIVING = ["getUpdates", "setWebhook", "deleteWebhook", "setMyCommands"];

/** A Telegram adapter started send-only on the fake at `apiRoot`; `held` collects the accounts it asked to hold. */
async function sendOnlyAdapter(apiRoot: string, fields: Record<string, unknown> = {}) {
  const config = TelegramConfigSchema.parse({ botToken: TEST_BOT.token, apiRoot, ...fields });
  const logger = createMemoryLogger();
  const adapter = createTelegramAdapter(config, { home: "/nonexistent", env: {}, logger, commands: COMMANDS });
  const held: string[] = [];
  // A channel state that throws when touched: a send-only start reads and writes no offset.
  const state = {
    readOnly: false,
    rows: () => expect.fail("a send-only adapter touched the channel state"),
  };
  const context = { state, receive: false, holdAccount: async (accountId: string) => void held.push(accountId) };
  await adapter.start(async () => expect.fail("a send-only adapter hands nothing in"), context);
  closers.push(() => adapter.stop());
  return { adapter, held, config, logger };
}

describe("a send-only Telegram adapter (cluster.owners many: another gateway holds the bot)", () => {
  it("sends a chunked reply and typing, calls nothing that receives, and leaves the holder's polling undisturbed", async () => {
    const holder = await harness({ start: false, commands: COMMANDS });
    const { fake } = holder;
    const { adapter, held } = await sendOnlyAdapter(fake.apiRoot, { replyToMode: "first" });
    const target = { channel: "telegram", to: "111" };
    for (const index of [0, 1])
      await adapter.send(target, { text: `part ${index}`, replyToMessageId: "10", part: { index, count: 2 } });
    await adapter.typing(target);
    expect(fake.sent.map((s) => [s.chatId, s.text, s.replyTo])).toEqual([
      ["111", "part 0", 10],
      ["111", "part 1", undefined],
    ]);
    expect(fake.callsTo("sendChatAction").map((c) => c.body)).toEqual([{ chat_id: "111", action: "typing" }]);
    expect(held).toEqual([]);
    expect(new Set(fake.calls.map((c) => c.method))).toEqual(new Set(["getMe", "sendMessage", "sendChatAction"]));

    // The holder starts beside it, polls and takes in a message: one poller, no 409, one menu, one deleteWebhook.
    await holder.start();
    fake.push(adaDm("hello", 1));
    await expect.poll(() => holder.received.map((m) => m.text)).toEqual(["hello"]);
    await fake.flush();
    await adapter.send(target, { text: "while the holder polls" });
    expect(fake.sent.map((s) => s.text)).toContain("while the holder polls");
    expect(fake.conflicts()).toBe(0);
    for (const method of ["setMyCommands", "deleteWebhook"]) expect(fake.callsTo(method)).toHaveLength(1);
    expect(fake.callsTo("setWebhook")).toHaveLength(0);
  });

  it("neither sets nor serves the webhook of a webhook account: the holder owns it", async () => {
    const { fake } = await harness({ start: false });
    const webhook = { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret_Token" };
    const { adapter } = await sendOnlyAdapter(fake.apiRoot, webhook);
    const server = http.createServer(async (req, res) => {
      if (!(await adapter.handleHttp(req, res))) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/telegram-webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret_Token" },
      body: JSON.stringify({ update_id: 5, ...adaDm("via webhook", 9) }),
    });
    expect(response.status).toBe(404);
    await adapter.send({ channel: "telegram", to: "111" }, { text: "sent anyway" });
    expect(fake.sent.map((s) => s.text)).toEqual(["sent anyway"]);
    expect(fake.calls.filter((c) => RECEIVING.includes(c.method))).toEqual([]);
  });

  it("starts every account send-only, routes each send to its account's token and reports each as send-only", async () => {
    const { fake } = await harness({ start: false, bots: [TEST_BOT, WORK_BOT] });
    const { adapter, held, config, logger } = await sendOnlyAdapter(fake.apiRoot, {
      accounts: { work: { botToken: WORK_BOT.token } },
    });
    await adapter.send({ channel: "telegram", to: "111", accountId: "work" }, { text: "from work" });
    await adapter.send({ channel: "telegram", to: "111", accountId: "default" }, { text: "from default" });
    expect(fake.sent.map((s) => [s.token, s.text])).toEqual([
      [WORK_BOT.token, "from work"],
      [TEST_BOT.token, "from default"],
    ]);
    expect(held).toEqual([]);
    expect(fake.calls.filter((c) => RECEIVING.includes(c.method))).toEqual([]);
    expect(logger.records.find((r) => r.message === "telegram adapter started")?.fields).toMatchObject({
      accounts: [
        { accountId: "default", mode: "send-only" },
        { accountId: "work", mode: "send-only" },
      ],
      sendOnly: true,
    });
    expect(adapter.accountHealth?.("work")).toEqual({ connected: true, sendOnly: true });
    const states = accountStates([adapter], { channels: { telegram: config } }, true);
    expect(states.map((s) => [s.accountId, s.connected, s.sendOnly])).toEqual([
      ["default", true, true],
      ["work", true, true],
    ]);
    const parts = readinessReport("ready", states, []).parts.filter((p) => p.kind === "channel");
    expect(parts.map((p) => [p.name, p.ok, p.reason])).toEqual([
      ["telegram/default", true, SEND_ONLY_REASON],
      ["telegram/work", true, SEND_ONLY_REASON],
    ]);
    // A stop leaves no connection open (the gateway reopens its adapters when its partitions change).
    await adapter.stop();
    await expect.poll(() => fake.openConnections()).toBe(0);
  });
});
