// The fake Bot API refuses two pollers of one bot at once, as Telegram does: the cluster tests count
// these refusals to prove that no two gateways ever poll the same bot together.
import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  adaDm,
  type FakeBot,
  type FakeTelegramServer,
  TEST_BOT,
  startFakeTelegramServer,
} from "./fake-telegram-server.js";

const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const OTHER_BOT: FakeBot = { token: "654321:OTHER", info: { ...TEST_BOT.info, id: 654321, username: "OtherBot" } };

/** A raw getUpdates call: its HTTP status and body. */
async function poll(fake: FakeTelegramServer, token: string, body: object, signal?: AbortSignal) {
  const res = await fetch(`${fake.apiRoot}/bot${token}/getUpdates`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the fake Telegram's getUpdates", () => {
  it("answers a second poll of a bot while one is open with 409, counts it, and lets the open one go on", async () => {
    const fake = await startFakeTelegramServer({ bots: [TEST_BOT, OTHER_BOT], maxHoldMs: 60_000 });
    fakes.push(fake);
    const open = new AbortController();
    const held = poll(fake, TEST_BOT.token, { timeout: 60 }, open.signal).catch(() => undefined);
    await fake.waitFor("getUpdates");
    expect(await poll(fake, TEST_BOT.token, { timeout: 0 })).toEqual({
      status: 409,
      body: {
        ok: false,
        error_code: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      },
    });
    expect(fake.conflicts()).toBe(1);
    // Another bot's poll is no conflict.
    expect((await poll(fake, OTHER_BOT.token, { timeout: 0 })).status).toBe(200);
    // The open poll still gets the update; once it is answered, the next poll is welcome.
    fake.push(adaDm("hi", 1));
    expect((await held)?.body).toMatchObject({ ok: true, result: [{ update_id: 1 }] });
    expect((await poll(fake, TEST_BOT.token, { offset: 2, timeout: 0 })).status).toBe(200);
    expect([fake.conflicts(), fake.conflicts(TEST_BOT.token), fake.conflicts(OTHER_BOT.token)]).toEqual([1, 1, 0]);
  });

  it("frees the bot for the next poller the moment an open poll's client goes away (a SIGKILLed poller)", async () => {
    const fake = await startFakeTelegramServer({ maxHoldMs: 60_000 });
    fakes.push(fake);
    // Its own connection, closed the way a killed process's is.
    const held = http.request(`${fake.apiRoot}/bot${TEST_BOT.token}/getUpdates`, { method: "POST", agent: false });
    held.on("error", () => undefined);
    held.end(JSON.stringify({ timeout: 60 }));
    await fake.waitFor("getUpdates");
    held.destroy();
    await expect.poll(() => fake.openConnections()).toBe(0);
    expect((await poll(fake, TEST_BOT.token, { timeout: 0 })).status).toBe(200);
    expect(fake.conflicts()).toBe(0);
  });
});
