// The partition share between real processes (test/fakes/partition-share-process.ts runs the member
// and share code a gateway runs), on a schema of 16 partitions: three members split them evenly; a
// SIGKILLed member's partitions go to the two others as soon as its liveness lock frees, not at their
// next pass; a SIGSTOPped member's go to the others at expiry, and once continued it reports
// that it holds none of them and never renewed them, then gets a share again.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeChild, useClusterNodes } from "../support/cluster-node-child.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const start = useClusterNodes("partition-share-process.ts");
const COUNT = 16;
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.end().catch(() => {});
});

/** A connection to the test schema of its own. */
async function connection(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
  clients.push(client);
  await client.connect();
  return client;
}

interface Member {
  child: NodeChild;
  incarnation: string;
}

/** Three members started at once, each with the schema's 16 partitions to share. */
async function three(prefix: string, cluster: { leaseTtlMs: number; heartbeatMs: number }): Promise<Member[]> {
  const more = { SB_PARTITIONS: String(COUNT) };
  const children = await Promise.all(
    ["a", "b", "c"].map((id) => start({ url: db.url, schema: db.schema, nodeId: `${prefix}-${id}`, cluster, more })),
  );
  return Promise.all(
    children.map(async (child) => ({ child, incarnation: (await child.line(/^ready /)).split(" ")[2]! })),
  );
}

/** The current partition leases (`released`: also the ones given up or expired): partition -> holder and fence. */
async function leases(probe: pg.Client, released = false): Promise<Map<number, { owner: string; fence: number }>> {
  const { rows } = await probe.query<{ name: string; owner: string; fence: string }>(
    "SELECT name, owner, fence FROM cluster_leases WHERE name LIKE 'partition:%' AND ($1 OR expires_at > now())",
    [released],
  );
  return new Map(rows.map((row) => [Number(row.name.split(":")[1]), { owner: row.owner, fence: Number(row.fence) }]));
}

/** The held set a member printed last. */
function reported(member: Member): number[] {
  const line = member.child.lines.filter((l) => l.startsWith("held ")).at(-1);
  return line ? (JSON.parse(line.slice(5)) as { held: number[] }).held : [];
}

/** Every partition held by one of `group`, each within `share`, as each member last reported. */
async function balanced(probe: pg.Client, group: Member[], share: number): Promise<boolean> {
  const rows = await leases(probe);
  if (rows.size !== COUNT) return false;
  if ([...rows.values()].some((lease) => !group.some((member) => member.incarnation === lease.owner))) return false;
  return group.every((member) => {
    const mine = [...rows].filter(([, lease]) => lease.owner === member.incarnation).map(([n]) => n);
    return mine.length <= share && mine.sort((a, b) => a - b).join() === reported(member).join();
  });
}

describe("the partition share between processes", () => {
  it("splits 16 partitions over three members: every one held by one member, each at most ceil(16 / 3) = 6", async () => {
    const probe = await connection();
    const group = await three("even", { leaseTtlMs: 1_000, heartbeatMs: 200 });
    await until(() => balanced(probe, group, 6), 10_000);
  }, 60_000);

  it("gives a SIGKILLed member's partitions to the two others at once (its liveness lock freed), not at their next pass", async () => {
    const cluster = { leaseTtlMs: 15_000, heartbeatMs: 5_000 };
    const probe = await connection();
    const [a, b, c] = await three("kill", cluster);
    await until(() => balanced(probe, [a!, b!, c!], 6), 10_000);
    const killedAt = performance.now();
    c!.child.process.kill("SIGKILL");
    await until(() => balanced(probe, [a!, b!], 8), 10_000);
    const tookMs = performance.now() - killedAt;
    // Each of A and B waits on C's liveness lock and runs a pass when it frees. Without that, both
    // would have to reach their next pass (every 5 s) within the bound; a loaded 2-core machine can
    // stall a process for a second, so the bound is 1.5 s.
    expect(tookMs, `the others held all ${tookMs.toFixed(0)} ms after the SIGKILL`).toBeLessThan(1_500);
  }, 60_000);

  it("gives a SIGSTOPped member's partitions to the others at expiry; continued, it reports holding none of them and never renewed them", async () => {
    const cluster = { leaseTtlMs: 1_000, heartbeatMs: 200 };
    const probe = await connection();
    const [a, b, c] = await three("stop", cluster);
    await until(() => balanced(probe, [a!, b!, c!], 6), 10_000);
    const old = reported(c!);
    c!.child.process.kill("SIGSTOP");
    const stoppedAt = performance.now();
    await until(() => balanced(probe, [a!, b!], 8), 10_000);
    expect(performance.now() - stoppedAt).toBeGreaterThan(cluster.leaseTtlMs / 2); // at expiry, not at once
    const alive = await probe.query("SELECT cluster_node_alive($1) AS alive", [c!.incarnation]);
    expect(alive.rows[0].alive).toBe(true); // its lock is still held: the leases expired
    const takenOver = await leases(probe);
    c!.child.process.kill("SIGCONT");
    const lostAll = `held ${JSON.stringify({ held: [], previous: old })}`;
    await until(() => c!.child.lines.includes(lostAll), 10_000);
    for (const n of old) await c!.child.line(new RegExp(`^lost partition:${n} \\d+$`));
    // Each of its old partitions is still its taker's with the same fence (maybe given back since), or
    // C's again with a higher one (taken after a give-back): never renewed as C's old lease.
    const now = await leases(probe, true);
    for (const n of old) {
      const lease = now.get(n)!;
      if (lease.owner === c!.incarnation) expect(lease.fence).toBeGreaterThan(takenOver.get(n)!.fence);
      else expect(lease).toEqual(takenOver.get(n));
    }
    await until(() => balanced(probe, [a!, b!, c!], 6), 10_000);
  }, 60_000);
});
