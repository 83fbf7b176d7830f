// A gateway whose PostgreSQL restarts in the middle of a burst: a real gateway process with the real
// Telegram adapter, 50 DMs through the fake Bot API, the server stopped (an immediate shutdown, like
// a crash: recovery at the next start; or a fast one: sessions told to end, then a clean stop) and
// started again on the same port and data. The gateway
// stays up, `/healthz` says degraded while the server is away and ok after, and every message is
// answered, none lost, at most one reply repeated (docs/reliability.md: the one-chunk window).
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePrivatePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";
import { burstAnswered, burstOutcome, pushBurst } from "../support/telegram-burst.js";
import { tempHome } from "../support/test-gateway.js";

// A server of its own: this test stops it.
const server = usePrivatePostgres();
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

describe("a gateway whose PostgreSQL restarts during a burst", () => {
  it.each(["immediate", "fast"] as const)(
    "%s shutdown: answers every message of a burst of 50 once (one repeat at most), reports degraded while the server is away, and never exits",
    async (mode) => {
      // Each reply is shown to the user at once and answered 40 ms later, as in the SIGKILL burst tests.
      const fake = await startFakeTelegramServer({ sendDelayMs: 40 });
      fakes.push(fake);
      const state = { backend: "postgres", postgres: { url: server().url, schema: freshSchema(), poolSize: 4 } };
      const env = {
        SB_HOME: await tempHome(),
        SB_API_ROOT: fake.apiRoot,
        SB_STATE: JSON.stringify(state),
        SB_QUEUE: JSON.stringify({ cap: 1000 }),
      };
      const child = await start("platform-gateway-process.ts", env);
      const port = Number(new URL(child.url).port);
      const healthz = async () => (await rawRequest(port, { path: "/healthz" })).body;
      expect(await healthz()).toEqual({ ok: true });

      const burst = pushBurst(fake, 50);
      await until(() => fake.sent.length >= 15, 30_000);
      await server().stop(mode);
      await until(async () => (await healthz()).status === "degraded", 30_000);
      expect((await healthz()).reason).toMatch(/^PostgreSQL is unreachable: /);
      await server().start();

      await until(() => burstAnswered(fake, burst), 60_000);
      await until(async () => (await healthz()).status === undefined, 30_000);
      expect(await healthz()).toEqual({ ok: true });
      // Every update confirmed and the gateway idle: anything sent twice has been sent by now.
      await fake.flush();
      await child.idle();
      expect({ exitCode: child.process.exitCode, signal: child.process.signalCode }).toEqual({
        exitCode: null,
        signal: null,
      });
      const { missing, repeated, inOrder } = burstOutcome(fake, burst);
      expect(missing).toEqual([]);
      expect(repeated.length, JSON.stringify(repeated)).toBeLessThanOrEqual(1);
      expect(repeated.every(([, n]) => n === 2)).toBe(true);
      expect(inOrder).toBe(true);
      // The process logs warnings only: the change back ("reachable again") is info (postgres-outage.test.ts).
      expect(child.stderr().match(/PostgreSQL is unreachable/g)).toHaveLength(1);
    },
    120_000,
  );
});
