// GET /metrics of a real gateway after real traffic: the Telegram adapter (grammy) against the fake
// Bot API on 127.0.0.1, the offline model, and a scrape over HTTP as Prometheus would do it.
import { register } from "prom-client";
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { createConfiguredAdapters } from "../../../adapters/index.js";
import { parseConfig } from "../../../src/config/index.js";
import type { AdapterStartContext } from "../../../src/index.js";
import { createFakeChannelAdapter } from "../../fakes/fake-channel-adapter.js";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../../fakes/fake-telegram-server.js";
import { scrape } from "../../support/scrape.js";
import { type TestGateway, startTestGateway, tempHome } from "../../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ADA = { id: 111, is_bot: false, first_name: "Ada", username: "ada" } as const;
const GROUP = { id: -1001234567890, type: "supergroup", title: "Team Chat" } as const;
let nextMessageId = 500;

const message = (chat: Record<string, unknown>, text: string) =>
  ({
    message: { message_id: nextMessageId++, date: 1767225600, chat, from: ADA, text },
  }) as unknown as Omit<Update, "update_id">;
const dm = (text: string) => message({ id: 111, type: "private", first_name: "Ada", username: "ada" }, text);

async function telegramGateway(
  fakeOptions: { sendDelayMs?: number } = {},
): Promise<{ fake: FakeTelegramServer; gw: TestGateway; base: string }> {
  const fake = await startFakeTelegramServer(fakeOptions);
  cleanups.push(fake.close);
  const home = await tempHome();
  const raw = {
    channels: {
      telegram: {
        botToken: TEST_BOT.token,
        apiRoot: fake.apiRoot,
        allowFrom: ["111"],
        groupAllowFrom: ["@ada"],
      },
    },
  };
  const adapters = await createConfiguredAdapters(parseConfig(raw).config, {
    home,
    env: {},
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const gw = await startTestGateway({ home, config: raw, adapters });
  cleanups.push(gw.close);
  return { fake, gw, base: gw.gateway.url.replace(/^ws/, "http") };
}

describe("GET /metrics", () => {
  it("counts messages by outcome, turns, model calls and deliveries by result after real Telegram traffic", async () => {
    const { fake, base } = await telegramGateway();
    fake.push(dm("hello"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    fake.push(dm("/status"));
    fake.push(message(GROUP, "talking among ourselves")); // no mention: ignored
    const twice = dm("said twice");
    fake.push(twice);
    fake.push(twice); // the same message again: a duplicate, answered once
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(3);
    fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    fake.push(dm("flaky"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(4);
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    fake.push(dm("blocked me"));
    // Its refusal first: a command pushed in the same polled batch may be answered before that turn ends.
    await expect
      .poll(async () => (await scrape(base)).value("switchboard_deliveries_total", { result: "failed" }), {
        timeout: 10_000,
      })
      .toBe(1);
    fake.push(dm("/send off"));
    fake.push(dm("anyone there?"));

    const expected = {
      turns: 5, // hello, said twice, flaky, blocked me, anyone there?
      commands: 2,
    };
    await expect
      .poll(async () => (await scrape(base)).value("switchboard_turns_total", { outcome: "ok" }), { timeout: 10_000 })
      .toBe(expected.turns);
    // A command's answer is delivered apart from the turns: wait until the fake has all five messages.
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(5);
    const m = await scrape(base);
    const inbound = (outcome: string) =>
      m.value("switchboard_inbound_messages_total", { channel: "telegram", account: "default", outcome });
    expect([inbound("turn"), inbound("command"), inbound("ignored"), inbound("duplicate")]).toEqual([
      expected.turns,
      expected.commands,
      1,
      1,
    ]);
    expect(m.value("switchboard_turns_total", { channel: "telegram", agent: "main", outcome: "ok" })).toBe(5);
    expect(m.value("switchboard_turn_duration_seconds_count", { channel: "telegram", outcome: "ok" })).toBe(5);
    expect(m.value("switchboard_turn_duration_seconds_sum", { channel: "telegram" })).toBeGreaterThan(0);
    const offline = { provider: "offline", model: "echo" };
    expect(m.value("switchboard_model_call_duration_seconds_count", { ...offline, outcome: "ok" })).toBe(5);
    expect(m.value("switchboard_model_tokens_total", { ...offline, direction: "input" })).toBeGreaterThan(0);
    expect(m.value("switchboard_model_tokens_total", { ...offline, direction: "output" })).toBeGreaterThan(0);
    const delivered = (result: string, reason = "") =>
      m.value("switchboard_deliveries_total", { channel: "telegram", account: "default", result, reason });
    // hello, /status's answer, said twice, flaky (after one retry), /send off's answer
    expect(delivered("sent")).toBe(5);
    expect(delivered("retried", "server_error")).toBe(1);
    expect(delivered("failed", "blocked")).toBe(1);
    expect(delivered("blocked", "sendPolicy")).toBe(1);
    expect(m.value("switchboard_journal_sync_duration_seconds_count")).toBeGreaterThan(0);
    expect(m.value("switchboard_channel_account_connected", { channel: "telegram", account: "default" })).toBe(1);
    expect(m.value("switchboard_outbox_pending_messages")).toBe(0);
    expect(m.value("switchboard_inbox_pending_messages")).toBe(0);
    // The default process metrics, from this gateway's own registry.
    expect(m.has("process_cpu_user_seconds_total")).toBe(true);
    expect(m.has("nodejs_eventloop_lag_seconds")).toBe(true);
    // Bounded labels: no user id, chat id, session key or message text ever becomes a label value.
    const values = m.samples.flatMap((s) => Object.values(s.labels));
    for (const leak of ["111", "-1001234567890", "agent:main", "hello", "flaky"])
      expect(values.filter((v) => v.includes(leak))).toEqual([]);
  });

  it("keeps its metrics in the gateway's own registry, never prom-client's global one", async () => {
    const { fake, base } = await telegramGateway();
    fake.push(dm("hello"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect((await scrape(base)).value("switchboard_inbound_messages_total")).toBe(1);
    // A second gateway in the same process counts from zero.
    const second = await telegramGateway();
    expect((await scrape(second.base)).value("switchboard_inbound_messages_total")).toBe(0);
    expect(await register.getMetricsAsJSON()).toEqual([]);
  });

  it("reports the outbox depth and the age of its oldest message while a send is under way", async () => {
    // Telegram shows the message at once but answers the send 1.5 s later: the item waits meanwhile.
    const { fake, base } = await telegramGateway({ sendDelayMs: 1_500 });
    fake.push(dm("slow platform"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const during = await scrape(base);
    expect(during.value("switchboard_outbox_pending_messages")).toBe(1);
    expect(during.value("switchboard_outbox_oldest_age_seconds")).toBeGreaterThan(0);
    await expect
      .poll(async () => (await scrape(base)).value("switchboard_outbox_pending_messages"), { timeout: 10_000 })
      .toBe(0);
    expect((await scrape(base)).value("switchboard_outbox_oldest_age_seconds")).toBe(0);
  });

  it("counts the inbound messages an adapter gives up on (Discord's freeze bound passed) by channel and account, from zero", async () => {
    const fake = createFakeChannelAdapter({ id: "fake" });
    let context: AdapterStartContext | undefined;
    const adapter = {
      ...fake,
      start: (sink: Parameters<typeof fake.start>[0], given: AdapterStartContext) => {
        context = given;
        return fake.start(sink, given);
      },
    };
    const gw = await startTestGateway({ adapters: [adapter] });
    cleanups.push(gw.close);
    const base = gw.gateway.url.replace(/^ws/, "http");
    const lost = async (account: string) =>
      (await scrape(base)).value("switchboard_inbound_lost_messages_total", { channel: "fake", account });
    expect(await lost("work")).toBe(0);
    context?.inboundLost?.("work", 2);
    context?.inboundLost?.("work", 1);
    context?.inboundLost?.("home", 1);
    expect([await lost("work"), await lost("home")]).toEqual([3, 1]);
    expect((await scrape(base)).text).toContain(
      'switchboard_inbound_lost_messages_total{channel="fake",account="work"} 3',
    );
  });
});
