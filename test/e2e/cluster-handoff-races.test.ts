// One idempotency key racing through two gateways, and the hooks' lockout shared by them (docs/
// scale-out.md "Inbound on any gateway"): real gateway processes on one real PostgreSQL schema, the
// same key POSTed to the owner and the standby at once, repeats to the standby while the owner
// drains the first copy, and wrong tokens on one gateway locking the client out on the other.
import { describe, expect, it } from "vitest";
import { until } from "../support/gateway-child.js";
import { type HookAnswer, inboxRunIds, postHook, useHandoffCluster } from "../support/handoff-cluster.js";

const { twoGateways } = useHandoffCluster();

/** The echoes of `prefix` the fake's bot sent, by text. */
const echoesOf = (sent: Array<{ text: string }>, prefix: string) =>
  sent.filter((s) => s.text.startsWith(`Echo: ${prefix}`)).map((s) => s.text);

/** Per key: every answer 202 and one run id, the one its turn ran under; how many were answered without `duplicate`. */
function oneRunPerKey(answers: Map<string, HookAnswer[]>, ranUnder: Map<string, unknown>) {
  return [...answers].map(([key, all]) => ({
    key,
    statuses: [...new Set(all.map((a) => a.status))],
    runIds: [...new Set(all.map((a) => a.body.runId))],
    ranUnder: ranUnder.get(key),
    fresh: all.filter((a) => !a.body.duplicate).length,
  }));
}

describe("one idempotency key through two gateways at once", () => {
  it("gives one key POSTed to the owner and the standby at the same time one run id, and runs it once", async () => {
    const { fake, cluster, owner, standby } = await twoGateways({ leaseTtlMs: 30_000, heartbeatMs: 10_000 });
    const answers = new Map<string, HookAnswer[]>();
    for (let i = 0; i < 20; i++) {
      const both = [owner.port, standby.port].map((port) => postHook(port, 4000 + i, `race ${i}`, `race-${i}`));
      answers.set(`race-${i}`, await Promise.all(both));
    }
    await until(() => echoesOf(fake.sent, "race ").length >= 20, 60_000);
    await owner.idle();
    expect(echoesOf(fake.sent, "race ").sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Echo: race ${i}`).sort());
    const perKey = oneRunPerKey(answers, await inboxRunIds(cluster));
    for (const k of perKey) {
      expect(k.statuses, k.key).toEqual([202]);
      expect(k.runIds, k.key).toEqual([k.ranUnder]);
      expect(k.fresh, k.key).toBeGreaterThanOrEqual(1);
    }
    const bothFresh = perKey.filter((k) => k.fresh === 2).length;
    process.stderr.write(`handoff race: ${bothFresh} of 20 keys answered without duplicate by both gateways\n`);
  }, 120_000);

  it("answers repeats of a key to a standby while the owner drains its first copy: one run id, exactly one answer new", async () => {
    const { fake, cluster, owner, standby } = await twoGateways({ leaseTtlMs: 30_000, heartbeatMs: 10_000 });
    const answers = new Map<string, HookAnswer[]>();
    for (let i = 0; i < 20; i++) {
      const key = `rb-${i}`;
      const first = postHook(standby.port, 5000 + i, `rb ${i}`, key);
      // Repeats 0-21 ms apart: some land while the owner takes the first copy in and deletes its row.
      const repeats = Array.from({ length: 8 }, (_, j) =>
        new Promise((resolve) => setTimeout(resolve, j * 3)).then(() =>
          postHook(standby.port, 5000 + i, `rb ${i}`, key),
        ),
      );
      answers.set(key, await Promise.all([first, ...repeats]));
    }
    await until(() => echoesOf(fake.sent, "rb ").length >= 20, 60_000);
    await owner.idle();
    expect(echoesOf(fake.sent, "rb ").sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Echo: rb ${i}`).sort());
    for (const k of oneRunPerKey(answers, await inboxRunIds(cluster)))
      expect(k, k.key).toEqual({ key: k.key, statuses: [202], runIds: [k.ranUnder], ranUnder: k.ranUnder, fresh: 1 });
  }, 120_000);
});

describe("the hooks' lockout across gateways", () => {
  it("locks a client out on every gateway: wrong tokens on the standby lock it out on the owner, and the reverse; the right token is then refused 429", async () => {
    // 127.0.0.1 is a trusted proxy here, so X-Forwarded-For names three clients from one test.
    const { owner, standby } = await twoGateways({ leaseTtlMs: 30_000, heartbeatMs: 10_000 }, "warn", {
      gateway: { trustedProxies: ["127.0.0.1"] },
    });
    const as = (client: string, token?: string) => ({
      "x-forwarded-for": client,
      ...(token && { authorization: `Bearer ${token}` }),
    });
    const wrongTimes = async (port: number, client: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await postHook(port, 1, "x", undefined, as(client, "wrong"))).status);
      return statuses;
    };
    expect(await wrongTimes(standby.port, "203.0.113.1")).toEqual([401, 401, 401, 401, 401]);
    const onOwner = await postHook(owner.port, 4100, "locked", "lock-1", as("203.0.113.1"));
    expect([onOwner.status, onOwner.body.error?.code]).toEqual([429, "RATE_LIMITED"]);
    expect(await wrongTimes(owner.port, "203.0.113.2")).toEqual([401, 401, 401, 401, 401]);
    const onStandby = await postHook(standby.port, 4100, "locked", "lock-2", as("203.0.113.2"));
    expect([onStandby.status, onStandby.body.error?.code]).toEqual([429, "RATE_LIMITED"]);
    // Another client is not locked out, on either gateway.
    const free = await Promise.all(
      [owner.port, standby.port].map((port, i) => postHook(port, 4101, `free ${i}`, `free-${i}`, as("203.0.113.3"))),
    );
    expect(free.map((a) => a.status)).toEqual([202, 202]);
  }, 120_000);

  it("keeps a client's count across a takeover: 3 wrong tokens on the owner, SIGKILL, 2 more on the new owner lock it out there", async () => {
    const { cluster, owner, standby } = await twoGateways({ leaseTtlMs: 30_000, heartbeatMs: 10_000 }, "warn", {
      gateway: { trustedProxies: ["127.0.0.1"] },
    });
    const as = (token?: string) => ({
      "x-forwarded-for": "203.0.113.9",
      ...(token && { authorization: `Bearer ${token}` }),
    });
    const wrong = async (port: number, times: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < times; i++) statuses.push((await postHook(port, 1, "x", undefined, as("wrong"))).status);
      return statuses;
    };
    expect(await wrong(owner.port, 3)).toEqual([401, 401, 401]);
    await cluster.kill(owner);
    const next = await cluster.owner({ not: owner });
    expect(next).toBe(standby);
    // A count lost with the owner would leave 2 of 5 used: these would be 401s and the right token 202.
    expect(await wrong(next.port, 2)).toEqual([401, 401]);
    const right = await postHook(next.port, 4200, "locked", "lock-takeover", as());
    expect([right.status, right.body.error?.code]).toEqual([429, "RATE_LIMITED"]);
    expect(await wrong(next.port, 1)).toEqual([429]);
  }, 120_000);
});
