// Leases between real processes (test/fakes/cluster-node-process.ts runs the cluster member code a
// gateway on PostgreSQL runs): a SIGKILLed holder's lease goes to a waiting peer within
// milliseconds of its liveness lock freeing, long before the TTL; a SIGSTOPped holder loses its
// lease at the TTL, and once continued its fenced write is refused and it gives the lease up.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { useClusterNodes } from "../support/cluster-node-child.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const start = useClusterNodes();
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

/** Sessions waiting on an advisory lock right now. */
async function advisoryWaiters(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'",
  );
  return rows[0]!.n;
}

/** The fence and the server time of an "acquired <name> <fence> <at>" line. */
const acquiredLine = (line: string) => ({ fence: Number(line.split(" ")[2]), at: Number(line.split(" ")[3]) });

describe("cluster leases between processes", () => {
  it("gives a SIGKILLed holder's lease to a waiting peer within ms of its liveness lock freeing, long before leaseTtlMs, with a higher fence", async () => {
    const cluster = { leaseTtlMs: 15_000, heartbeatMs: 3_000 };
    const a = await start({ url: db.url, schema: db.schema, nodeId: "kill-a", cluster });
    const b = await start({ url: db.url, schema: db.schema, nodeId: "kill-b", cluster });
    a.send("acquire kill-lease");
    expect(acquiredLine(await a.line(/^acquired kill-lease /)).fence).toBe(1);
    b.send("wait kill-lease");
    // A watcher of A's liveness lock of the test's own, to learn (by the server's clock) when it frees.
    const watcher = await connection();
    const key = (await watcher.query("SELECT lock_key FROM cluster_members WHERE node_id = 'kill-a'")).rows[0].lock_key;
    const freed = watcher
      .query("SELECT pg_advisory_lock_shared($1::bigint)", [key])
      .then(() => watcher.query<{ at: number }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at"));
    const probe = await connection();
    await until(async () => (await advisoryWaiters(probe)) >= 2); // B and the watcher both wait on A
    const killedAt = Date.now();
    a.process.kill("SIGKILL");
    const freedAt = (await freed).rows[0]!.at;
    const taken = acquiredLine(await b.line(/^acquired kill-lease /));
    expect(taken.fence).toBe(2);
    const lagMs = taken.at - freedAt;
    expect(lagMs, `peer took the lease ${lagMs.toFixed(1)} ms after the lock freed`).toBeLessThan(250);
    expect(Date.now() - killedAt).toBeLessThan(cluster.leaseTtlMs / 3);
  }, 60_000);

  it("lets a peer take a SIGSTOPped holder's lease at its TTL; continued, the old holder's fenced write is refused and it gives the lease up", async () => {
    const cluster = { leaseTtlMs: 1_000, heartbeatMs: 200 };
    const a = await start({ url: db.url, schema: db.schema, nodeId: "stop-a", cluster });
    const b = await start({ url: db.url, schema: db.schema, nodeId: "stop-b", cluster });
    a.send("acquire stop-lease");
    await a.line(/^acquired stop-lease 1 /);
    a.send("write stop-lease by-a");
    await a.line(/^wrote by-a$/);
    b.send("wait stop-lease");
    const probe = await connection();
    a.process.kill("SIGSTOP");
    const taken = acquiredLine(await b.line(/^acquired stop-lease /));
    expect(taken.fence).toBe(2);
    // A's liveness lock is still held (its socket is open): the takeover came from the expired lease.
    const alive = await probe.query("SELECT cluster_node_alive('stop-a') AS alive");
    expect(alive.rows[0].alive).toBe(true);
    b.send("write stop-lease by-b");
    await b.line(/^wrote by-b$/);
    a.process.kill("SIGCONT");
    a.send("write stop-lease stale");
    await a.line(/^refused stale$/);
    await a.line(/^lost stop-lease 1$/);
    a.send("acquire stop-lease");
    await a.line(/^held stop-lease stop-b$/);
    const { rows } = await probe.query(
      "SELECT value FROM state_rows WHERE tbl = 'cluster-test' AND key = 'stop-lease'",
    );
    expect(rows).toEqual([{ value: "by-b" }]);
  }, 60_000);

  it("refuses a second live process under a node id in use, naming it and the fix", async () => {
    const cluster = { leaseTtlMs: 15_000, heartbeatMs: 3_000 };
    await start({ url: db.url, schema: db.schema, nodeId: "twin", cluster });
    await expect(start({ url: db.url, schema: db.schema, nodeId: "twin", cluster })).rejects.toThrow(
      'node id "twin" is in use by another live gateway on this schema: give each gateway its own gateway.nodeId',
    );
  }, 60_000);
});
