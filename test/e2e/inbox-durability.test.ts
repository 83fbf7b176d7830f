// The promise of docs/reliability.md, tried with a real gateway process, the real Telegram adapter
// and a fake Bot API that outlives it: a burst of 50 DMs, the gateway SIGKILLed twice mid-burst.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** How often each "Echo: burst <n>" reached the user. */
function answers(fake: FakeTelegramServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sent of fake.sent) counts.set(sent.text, (counts.get(sent.text) ?? 0) + 1);
  return counts;
}

describe("the durable inbox across SIGKILL", () => {
  it("answers every message of a burst of 50 after two kills, and none twice beyond the one in-flight chunk per kill", async () => {
    // Each reply is shown to the user at once and answered 40 ms later: a kill can fall in that window.
    const fake = await startFakeTelegramServer({ sendDelayMs: 40 });
    fakes.push(fake);
    const home = await tempHome();
    // Every message its own turn and reply, however many wait (by default the 21st waiting one shortens the oldest).
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_QUEUE: JSON.stringify({ cap: 1000 }) };
    const burst = Array.from({ length: 50 }, (_, i) => `burst ${i + 1}`);
    let child = await start("platform-gateway-process.ts", env);
    for (const [i, text] of burst.entries()) fake.push(adaDm(text, i + 1));

    const logs: string[] = [];
    for (const killAt of [15, 30]) {
      await until(() => fake.sent.length >= killAt);
      await killHard(child);
      logs.push(child.stderr());
      child = await start("platform-gateway-process.ts", env);
    }
    await until(() => burst.every((text) => answers(fake).has(`Echo: ${text}`)), 30_000);
    // Every update confirmed and the gateway idle: anything sent twice has been sent by now.
    await fake.flush();
    await child.idle();
    logs.push(child.stderr());

    const counts = answers(fake);
    expect(burst.filter((text) => !counts.has(`Echo: ${text}`))).toEqual([]);
    const twice = [...counts].filter(([, n]) => n > 1);
    // Telegram cannot deduplicate: a chunk in flight at a kill may arrive twice, at most one per kill, and it is logged.
    expect(twice.length).toBeLessThanOrEqual(2);
    expect(twice.every(([, n]) => n === 2)).toBe(true);
    const warned = (logs.join("\n").match(/it may arrive twice/g) ?? []).length;
    expect(warned).toBeGreaterThanOrEqual(twice.length);
    // In order: the first answer to each message follows the first answer to the one before it.
    const firstSeen = burst.map((text) => fake.sent.findIndex((s) => s.text === `Echo: ${text}`));
    expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
  }, 90_000);

  it("stores a whole polled batch before the next poll confirms it: a kill as each batch is confirmed loses nothing", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_QUEUE: JSON.stringify({ cap: 1000 }) };
    // 300 DMs from 111 (allowed): three batches of 100, the most getUpdates hands over at once.
    const burst = Array.from({ length: 300 }, (_, i) => `batch ${i + 1}`);
    let child = await start("platform-gateway-process.ts", env);
    for (const [i, text] of burst.entries()) fake.push(adaDm(text, i + 1));
    const confirming = (offset: number) => fake.callsTo("getUpdates").some((call) => call.body.offset === offset);
    for (const offset of [101, 201]) {
      // The poll asking after a batch tells Telegram it arrived: the batch must be on disk by then.
      await until(() => confirming(offset), 30_000);
      await killHard(child);
      child = await start("platform-gateway-process.ts", env);
    }
    await until(() => burst.every((text) => answers(fake).has(`Echo: ${text}`)), 60_000);
    const counts = answers(fake);
    expect(burst.filter((text) => !counts.has(`Echo: ${text}`))).toEqual([]);
    // A reply in flight at a kill may arrive twice (Telegram cannot deduplicate), at most one per kill.
    expect([...counts].filter(([, n]) => n > 1).length).toBeLessThanOrEqual(2);
    const firstSeen = burst.map((text) => fake.sent.findIndex((s) => s.text === `Echo: ${text}`));
    expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
  }, 120_000);
});
