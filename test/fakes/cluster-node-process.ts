// One cluster member in a process of its own (src/cluster/cluster-node.ts, the code a gateway on
// PostgreSQL runs), for tests that SIGKILL or SIGSTOP a lease holder. A whole second gateway on one
// schema is refused until sessions have owners (src/gateway/core-cluster.ts), so the lease claims
// between processes are proven on members. Commands on stdin, answers on stdout:
//   acquire <name>   -> "acquired <name> <fence> <acquired_at ms, server clock>" | "held <name> <owner>"
//   wait <name>      -> the same "acquired" line once the lease is free (at once when its holder dies)
//   write <name> <v> -> a fenced transaction writing state_rows ('cluster-test', <name>) = v: "wrote <v>" | "refused <v>"
//   release <name>   -> "released <name>"
// It prints "ready <nodeId> <incarnation>" once joined and "lost <name> <fence>" when a heartbeat or a write finds
// a lease taken over. Env: SB_PG_URL, SB_SCHEMA, SB_NODE_ID, SB_CLUSTER (JSON: leaseTtlMs, heartbeatMs).
import { createInterface } from "node:readline";
import { joinCluster } from "../../src/cluster/cluster-node.js";
import { FencedOutError } from "../../src/cluster/lease-sql.js";
import { createLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";

const logger = createLogger("warn");
const say = (line: string) => process.stdout.write(`${line}\n`);
const database = await openPostgresDatabase({
  url: process.env.SB_PG_URL!,
  schema: process.env.SB_SCHEMA!,
  logger,
  probeEveryMs: 0,
});
const node = await joinCluster({
  pool: database.pool,
  schema: database.schema,
  member: { nodeId: process.env.SB_NODE_ID!, host: "test-host", pid: process.pid, port: 0 },
  cluster: JSON.parse(process.env.SB_CLUSTER!),
  logger,
  onLost: (lease) => say(`lost ${lease.name} ${lease.fence}`),
});

/** The "acquired" line, with the server's time of the takeover statement. */
async function acquired(name: string, fence: number): Promise<void> {
  const { rows } = await database.pool.query<{ at: number }>(
    "SELECT (extract(epoch FROM acquired_at) * 1000)::float8 AS at FROM cluster_leases WHERE name = $1",
    [name],
  );
  say(`acquired ${name} ${fence} ${rows[0]!.at}`);
}

const commands: Record<string, (name: string, value?: string) => Promise<void>> = {
  async acquire(name) {
    const result = await node.acquire(name);
    if ("lease" in result) return acquired(name, result.lease.fence);
    say(`held ${name} ${result.holder.owner}`);
  },
  async wait(name) {
    const lease = await node.acquireWhenFree(name);
    await acquired(name, lease.fence);
  },
  async write(name, value = "") {
    try {
      await database.transaction(async (client) => {
        await node.checkFence(client, name);
        await client.query(
          "INSERT INTO state_rows (tbl, key, value) VALUES ('cluster-test', $1, to_jsonb($2::text)) ON CONFLICT (tbl, key) DO UPDATE SET value = excluded.value",
          [name, value],
        );
      });
      say(`wrote ${value}`);
    } catch (err) {
      if (!(err instanceof FencedOutError)) throw err;
      say(`refused ${value}`);
    }
  },
  async release(name) {
    await node.release(name);
    say(`released ${name}`);
  },
};

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const [command, name, value] = line.split(" ");
  void commands[command!]?.(name!, value);
});
say(`ready ${node.nodeId} ${node.incarnation}`);
