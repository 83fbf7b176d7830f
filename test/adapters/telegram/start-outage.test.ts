// docs/telegram.md "Start during an outage": an account started while the Bot API is away (5xx,
// connection refused) starts anyway, not connected (accountHealth and readiness say why), and
// connects in the background with the poll backoff: an update sent meanwhile is taken in once
// Telegram is back. Send-only, each send asks getMe again first. A rejected token (401) still fails
// the start, receiving (./telegram-adapter.test.ts) and send-only (below).
import { describe, expect, it } from "vitest";
import { createTelegramAdapter } from "../../../adapters/telegram/index.js";
import { TelegramConfigSchema } from "../../../adapters/telegram/telegram-config.js";
import { accountStates } from "../../../src/gateway/account-states.js";
import { SEND_ONLY_REASON, readinessReport } from "../../../src/gateway/readiness.js";
import type { ChannelAdapter } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { TEST_BOT, adaDm } from "../../fakes/fake-telegram-server.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { useTelegramHarness } from "./telegram-harness.js";

const harness = useTelegramHarness();
const closers = closersAfterEach();
const BAD_GATEWAY = { error_code: 502, description: "Bad Gateway" };
const AWAY = ["getMe", "deleteWebhook", "getUpdates", "sendMessage"];

/** The readiness parts of the adapter's Telegram accounts: [ok, reason]. */
function readiness(adapter: ChannelAdapter) {
  const states = accountStates([adapter], { channels: { telegram: { botToken: TEST_BOT.token } } }, true);
  return readinessReport("ready", states, [])
    .parts.filter((p) => p.kind === "channel")
    .map((p) => [p.ok, p.reason]);
}

/** A send-only Telegram adapter on the fake at `apiRoot` (another gateway holds the bot). */
async function sendOnlyAdapter(apiRoot: string, token = TEST_BOT.token) {
  const config = TelegramConfigSchema.parse({ botToken: token, apiRoot });
  const adapter = createTelegramAdapter(config, { home: "/nonexistent", env: {}, logger: createMemoryLogger() });
  const state = { readOnly: false, rows: () => expect.fail("a send-only adapter touched the channel state") };
  const start = adapter.start(async () => expect.fail("a send-only adapter hands nothing in"), {
    state,
    receive: false,
  });
  closers.push(() => adapter.stop());
  await start;
  return adapter;
}

describe("a Telegram account started while the Bot API is away", () => {
  it("receiving: starts not connected while every call answers 502, then polls, takes in the update sent meanwhile and answers", async () => {
    const h = await harness({ start: false });
    let back!: () => void;
    const over = new Promise<void>((resolve) => (back = resolve));
    for (const method of AWAY) void h.fake.failFor(method, BAD_GATEWAY, over);
    await h.start();
    expect(h.adapter.accountHealth?.("default")).toEqual({
      connected: false,
      lastError: expect.stringMatching(/^not connected: Telegram not reached yet, connecting in the background: .*502/),
    });
    expect(readiness(h.adapter)).toEqual([[false, expect.stringContaining("Telegram not reached yet")]]);
    h.fake.push(adaDm("during the outage", 1));
    await h.fake.waitFor("getMe", 3); // asked again in the background
    back();
    await expect.poll(() => h.received.map((m) => m.text)).toEqual(["during the outage"]);
    expect(h.adapter.accountHealth?.("default")).toBeUndefined();
    expect(readiness(h.adapter)).toEqual([[true, "connected"]]);
    await h.adapter.send({ channel: "telegram", to: "111" }, { text: "answer" });
    expect(h.fake.sent.map((s) => s.text)).toEqual(["answer"]);
  });

  it("receiving: starts while the port refuses connections, and polls once it listens again", async () => {
    const h = await harness({ start: false });
    const down = h.fake.goDown(1_000);
    await h.start();
    expect(h.adapter.accountHealth?.("default")?.connected).toBe(false);
    await down;
    h.fake.push(adaDm("after", 1));
    await expect.poll(() => h.received.map((m) => m.text), { timeout: 10_000 }).toEqual(["after"]);
    expect(h.adapter.accountHealth?.("default")).toBeUndefined();
  });

  it("send-only: starts not connected while getMe answers 502; a send fails retryably, then goes out once Telegram is back", async () => {
    const { fake } = await harness({ start: false });
    let back!: () => void;
    const over = new Promise<void>((resolve) => (back = resolve));
    for (const method of ["getMe", "sendMessage"]) void fake.failFor(method, BAD_GATEWAY, over);
    const adapter = await sendOnlyAdapter(fake.apiRoot);
    expect(adapter.accountHealth?.("default")).toEqual({
      connected: false,
      sendOnly: true,
      lastError: expect.stringMatching(/^send-only, Telegram not reached yet \(sends are retried\): .*502/),
    });
    expect(readiness(adapter)).toEqual([[false, expect.stringContaining("send-only, Telegram not reached yet")]]);
    const reply = () => adapter.send({ channel: "telegram", to: "111" }, { text: "the reply" });
    await expect(reply()).rejects.toMatchObject({ retryable: true });
    back();
    await reply();
    expect(fake.sent.map((s) => s.text)).toEqual(["the reply"]);
    expect(adapter.accountHealth?.("default")).toEqual({ connected: true, sendOnly: true });
    expect(readiness(adapter)).toEqual([[true, SEND_ONLY_REASON]]);
  });

  it("send-only: a rejected token (401) still fails the start", async () => {
    const { fake } = await harness({ start: false });
    await expect(sendOnlyAdapter(fake.apiRoot, "999:WRONG")).rejects.toThrow(/Telegram rejected the bot token .*401/);
  });

  it("webhook mode: a setWebhook answered 502 at start is asked again with the backoff until Telegram sets it", async () => {
    const webhook = { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret_Token" };
    const h = await harness({ start: false, config: webhook });
    let back!: () => void;
    const over = new Promise<void>((resolve) => (back = resolve));
    void h.fake.failFor("setWebhook", BAD_GATEWAY, over);
    await h.start();
    await h.fake.waitFor("setWebhook", 2); // asked again in the background
    back();
    await expect.poll(() => h.logger.records.filter((r) => r.message === "telegram webhook set").length).toBe(1);
    expect(h.logger.records.map((r) => r.message)).not.toContain("telegram bot stopped");
    expect(h.fake.callsTo("getUpdates")).toEqual([]);
  });
});
