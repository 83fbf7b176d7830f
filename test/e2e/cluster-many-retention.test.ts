// `session.retention` in `cluster.owners: "many"` (docs/scale-out.md "N owners"): every core sweeps
// the sessions of the partitions it holds, so a partition member (not the global holder) removes its
// own old cron sessions; archives stay the global holder's. Real gateway processes, real PostgreSQL.
import { afterEach, describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { holdingLines, settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const DAY_MS = 86_400_000;
/** Cron sessions spread over the partitions: `old` ones last ran 40 days ago (the default keeps 30), `fresh` ones now. */
const OLD = Array.from({ length: 64 }, (_, i) => `agent:main:cron:old-${i}`);
const FRESH = Array.from({ length: 64 }, (_, i) => `agent:main:cron:fresh-${i}`);

/** The partitions of a gateway's first core, from its first "holding partitions" line ("0-3, 9"). */
function firstOpened(gateway: ClusterGateway): Set<number> {
  const { parts } = holdingLines(gateway).find((line) => line.change === "opened")!;
  const ranges = parts.split(", ").map((r) => r.split("-").map(Number) as [number, number?]);
  return new Set(ranges.flatMap(([from, to = from]) => Array.from({ length: to - from + 1 }, (_, i) => from + i)));
}

describe('session.retention with cluster.owners: "many"', () => {
  it("a partition member sweeps its own old cron sessions at its core's open; its fresh ones stay", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 1,
      cluster: { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" },
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
    });
    // Stored while only the global holder runs, behind its back (its image never loads them).
    for (const [keys, at] of [
      [OLD, Date.now() - 40 * DAY_MS],
      [FRESH, Date.now()],
    ] as const)
      for (const key of keys)
        await cluster.query("INSERT INTO state_rows (tbl, key, value, part) VALUES ('sessions:main', $1, $2, $3)", [
          key,
          JSON.stringify({ sessionId: `s-${key.split(":").at(-1)}`, updatedAt: at }),
          partOf(key),
        ]);
    const member = await cluster.add();
    await settledSplit(cluster);
    const opened = firstOpened(member);
    const mine = (keys: readonly string[]) => keys.filter((key) => opened.has(partOf(key)));
    expect(mine(OLD).length).toBeGreaterThan(0);
    const stored = async () =>
      new Set(
        (await cluster.query<{ key: string }>("SELECT key FROM state_rows WHERE tbl = 'sessions:main'")).map(
          (row) => row.key,
        ),
      );
    let seen = new Set<string>();
    await until(async () => {
      seen = await stored();
      return !mine(OLD).some((key) => seen.has(key));
    }, 30_000);
    expect(mine(FRESH).filter((key) => !seen.has(key))).toEqual([]);
    // It touched no session of the partitions it does not hold (the global holder never loaded those rows).
    expect(OLD.filter((key) => !opened.has(partOf(key))).every((key) => seen.has(key))).toBe(true);
  }, 90_000);
});
