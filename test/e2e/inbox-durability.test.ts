// The promise of docs/reliability.md, tried with a real gateway process, the real Telegram adapter
// and a fake Bot API that outlives it: a burst of 50 DMs, the gateway SIGKILLed twice mid-burst
// (on each state backend), and a kill as each polled batch is confirmed.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { describeBackends } from "../support/state-backends.js";
import { burstAnswered, burstOutcome, pushBurst } from "../support/telegram-burst.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

describeBackends("the durable inbox across SIGKILL", (backend) => {
  it("answers every message of a burst of 50 after two kills, and none twice beyond the one in-flight chunk per kill", async () => {
    // Each reply is shown to the user at once and answered 40 ms later: a kill can fall in that window.
    const fake = await startFakeTelegramServer({ sendDelayMs: 40 });
    fakes.push(fake);
    const at = await backend.home();
    // Every message its own turn and reply, however many wait (by default the 21st waiting one shortens the oldest).
    const env = { SB_HOME: at.home, ...at.env, SB_API_ROOT: fake.apiRoot, SB_QUEUE: JSON.stringify({ cap: 1000 }) };
    let child = await start("platform-gateway-process.ts", env);
    const burst = pushBurst(fake, 50);

    const logs: string[] = [];
    for (const killAt of [15, 30]) {
      await until(() => fake.sent.length >= killAt);
      await killHard(child);
      logs.push(child.stderr());
      child = await start("platform-gateway-process.ts", env);
    }
    await until(() => burstAnswered(fake, burst), 60_000);
    // Every update confirmed and the gateway idle: anything sent twice has been sent by now.
    await fake.flush();
    await child.idle();
    logs.push(child.stderr());

    const { missing, repeated, inOrder } = burstOutcome(fake, burst);
    expect(missing).toEqual([]);
    // Telegram cannot deduplicate: a chunk in flight at a kill may arrive twice, at most one per kill, and it is logged.
    expect(repeated.length).toBeLessThanOrEqual(2);
    expect(repeated.every(([, n]) => n === 2)).toBe(true);
    const warned = (logs.join("\n").match(/it may arrive twice/g) ?? []).length;
    expect(warned).toBeGreaterThanOrEqual(repeated.length);
    // In order: the first answer to each message follows the first answer to the one before it.
    expect(inOrder).toBe(true);
  }, 120_000);
});

describe("the durable inbox across SIGKILL", () => {
  it("stores a whole polled batch before the next poll confirms it: a kill as each batch is confirmed loses nothing", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_QUEUE: JSON.stringify({ cap: 1000 }) };
    let child = await start("platform-gateway-process.ts", env);
    // 300 DMs from 111 (allowed): three batches of 100, the most getUpdates hands over at once.
    const burst = pushBurst(fake, 300, "batch");
    const confirming = (offset: number) => fake.callsTo("getUpdates").some((call) => call.body.offset === offset);
    for (const offset of [101, 201]) {
      // The poll asking after a batch tells Telegram it arrived: the batch must be on disk by then.
      await until(() => confirming(offset), 30_000);
      await killHard(child);
      child = await start("platform-gateway-process.ts", env);
    }
    await until(() => burstAnswered(fake, burst), 60_000);
    const { missing, repeated, inOrder } = burstOutcome(fake, burst);
    expect(missing).toEqual([]);
    // A reply in flight at a kill may arrive twice (Telegram cannot deduplicate), at most one per kill.
    expect(repeated.length).toBeLessThanOrEqual(2);
    expect(inOrder).toBe(true);
  }, 120_000);
});
