// Bad input at the Telegram edge of a real gateway: a seeded stream of malformed updates through
// polling, and bad bodies on the webhook path. The gateway keeps serving, answers the valid
// message that follows, and leaves every state file readable.
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { createConfiguredAdapters } from "../../adapters/index.js";
import { parseConfig } from "../adapters/table-config.js";
import { createMemoryLogger } from "../../src/logger.js";
import { badUpdates, hugeTextUpdate } from "../fakes/bad-telegram-updates.js";
import { type FakeTelegramServer, TEST_BOT, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { readStateFile } from "../support/read-state-file.js";
import { type TestGateway, startTestGateway, tempHome } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(fake: FakeTelegramServer, telegram: Record<string, unknown> = {}): Promise<TestGateway> {
  const home = await tempHome();
  const raw = {
    channels: {
      telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, allowFrom: ["111"], owners: ["111"], ...telegram },
    },
  };
  const adapters = await createConfiguredAdapters(parseConfig(raw).config, {
    home,
    env: {},
    logger: createMemoryLogger(),
  });
  const gw = await startTestGateway({ home, config: raw, adapters });
  cleanups.push(gw.close);
  return gw;
}

/** Still serving: /healthz, a method call, and every state file reads back (snapshot and journal). */
async function stillHealthy(gw: TestGateway): Promise<void> {
  const port = new URL(gw.gateway.url).port;
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  const client = await gw.client();
  expect(await client.call("sessions.list", {})).toMatchObject({ count: expect.any(Number) });
  const state = path.join(gw.home, "state");
  for (const name of (await readdir(state)).filter((n) => n.endsWith(".json")))
    await readStateFile(path.join(state, name));
  await readStateFile(path.join(gw.home, "agents", "main", "sessions", "sessions.json"));
}

describe("the Telegram edge under bad input (seeded fuzz)", () => {
  it("survives 150 malformed updates by polling, moves past them, and answers the messages that follow", async () => {
    const fake = await startFakeTelegramServer();
    cleanups.push(fake.close);
    const gw = await gateway(fake);
    for (const update of badUpdates(7, 150)) {
      const { update_id: _ignored, ...rest } = (
        typeof update === "object" && update !== null ? update : { junk: update }
      ) as Record<string, unknown>;
      fake.push(rest as Omit<Update, "update_id">);
    }
    const { update_id: _id, ...huge } = hugeTextUpdate(0) as Record<string, unknown>;
    fake.push(huge as Omit<Update, "update_id">);
    const last = fake.push(adaDm("still there?", 9_999));
    await expect.poll(() => fake.sent.some((s) => s.text === "Echo: still there?"), { timeout: 15_000 }).toBe(true);
    // The 100,000-character message was answered too, in chunks within Telegram's limit.
    const echoed = fake.sent.filter((s) => s.text.includes("yyyy"));
    expect(echoed.length).toBeGreaterThanOrEqual(25);
    expect(echoed.every((s) => s.text.length <= 4096)).toBe(true);
    // Polling moved past every update: none is fetched again and again.
    // The offset is a row of the channel state (`state/channels.json` and the journal on local).
    const offset = async () =>
      (await readStateFile(path.join(gw.home, "state", "channels.json")))["telegram/default/offset"]?.value as
        | { botId: number; lastUpdateId: number }
        | undefined;
    await expect.poll(async () => (await offset())?.lastUpdateId).toBe(last);
    expect((await offset())?.botId).toBe(TEST_BOT.info.id);
    await stillHealthy(gw);
  }, 60_000);

  it("refuses bad webhook bodies with a status Telegram understands and keeps serving", async () => {
    const fake = await startFakeTelegramServer();
    cleanups.push(fake.close);
    const gw = await gateway(fake, {
      webhookUrl: "https://bot.example.com/tg",
      webhookPath: "/tg",
      webhookSecret: "s3cret_Token",
    });
    const url = `http://127.0.0.1:${new URL(gw.gateway.url).port}/tg`;
    const post = (body: string | Uint8Array, contentType = "application/json") =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": contentType, "x-telegram-bot-api-secret-token": "s3cret_Token" },
        body,
      });
    expect((await post("{not json")).status).toBe(400);
    expect((await post("null")).status).toBe(400); // JSON, but not an update
    expect((await post(JSON.stringify({ update_id: 1, message: { text: 5 } }))).status).toBe(200); // malformed: logged, never resent
    expect((await post("hello", "text/plain")).status).toBe(415);
    expect((await post(new Uint8Array(2 * 1024 * 1024).fill(32))).status).toBe(413);
    for (const update of badUpdates(11, 40)) expect([200, 400]).toContain((await post(JSON.stringify(update))).status);
    expect((await post(JSON.stringify({ update_id: 2, ...adaDm("after the noise", 77) }))).status).toBe(200);
    await expect.poll(() => fake.sent.map((s) => s.text)).toContain("Echo: after the noise");
    await stillHealthy(gw);
  }, 60_000);
});
