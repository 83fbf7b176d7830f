// Partition owners of `cluster.owners: "many"` in one test process (docs/scale-out.md "A fence per
// partition on every write"): each its own pool and real ClusterNode on one 16-partition schema,
// holding a set of partition leases (and the writer lease when it is the global holder), writing
// through `fenced(database, node, { global })` and a state port opened for its partitions.
import { expect } from "vitest";
import { joinCluster } from "../../src/cluster/cluster-node.js";
import { leaseOfPart } from "../../src/cluster/cluster-status.js";
import type { HeldLease } from "../../src/cluster/lease-sql.js";
import { parseConfig } from "../../src/config/index.js";
import { fenced } from "../../src/gateway/fenced-database.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { partOf } from "../../src/routing/partition.js";
import { createPostgresTranscripts } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { closersAfterEach } from "./closed-after-each.js";
import { cronTable, outboxTable, type PartRow, sessionsTable } from "./part-tables.js";
import { freshSchema, usePostgres } from "./postgres.js";

const COUNT = 16;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
/** Session keys of partition `part` (of 16). */
const keysOf = (part: number, n = 2) =>
  range(0, 400)
    .map((i) => `agent:main:telegram:dm:${i}`)
    .filter((key) => partOf(key, COUNT) === part)
    .slice(0, n);

/** A platform message of chat `chat` as the adapter hands it over. */
const message = (chat: string, id: string) =>
  InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: chat },
    sender: { id: chat },
    messageId: id,
    text: "hi",
  });

/** The helpers, on the run's server; what they open is closed after each test of the calling file. */
export function usePartitionOwners() {
  const db = usePostgres();
  const logger = createMemoryLogger();
  const closing = closersAfterEach();
  const { config } = parseConfig({ cluster: { leaseTtlMs: 180_000, heartbeatMs: 60_000 } });

  /** A fresh schema of 16 partitions. */
  async function schema16(): Promise<string> {
    const schema = freshSchema();
    const setup = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
    await setup.pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [String(COUNT)]);
    await setup.close();
    return schema;
  }

  /** The schema's database, unfenced (to store rows as another gateway or an earlier version did). */
  async function openPlain(schema: string): Promise<PostgresDatabase> {
    const plain = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
    closing.push(() => plain.close());
    return plain;
  }

  /** The state port of `parts` on an owner's database, with its tables, inbox and transcripts. */
  async function openPort(database: PostgresDatabase, parts: number[]) {
    const state = openPostgresState(database, { logger, parts });
    closing.push(() => state.close());
    const [sessions, outbox, cron] = await Promise.all(
      [sessionsTable, outboxTable, cronTable].map((spec) => state.table<PartRow>(spec)),
    );
    const inbox = await createInbox({ state, path: "inbox.json", logger });
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    return { state, sessions: sessions!, outbox: outbox!, cron: cron!, inbox, transcripts };
  }

  /**
   * A partition owner as step 7 runs one: its own pool and ClusterNode, the leases of `parts`, fenced
   * `global: false` (`global`: also the writer lease, fenced as the global holder).
   */
  async function openOwner(schema: string, nodeId: string, parts: number[], global = false) {
    const plain = await openPlain(schema);
    const lost: HeldLease[] = [];
    const member = { nodeId, host: "127.0.0.1", pid: process.pid, port: 0 };
    const cluster = config.cluster;
    const node = await joinCluster({ pool: plain.pool, schema, member, cluster, logger, onLost: (l) => lost.push(l) });
    const [first, ...rest] = [...(global ? [leaseOfPart(null)] : []), ...parts.map(leaseOfPart)];
    expect(await node.acquire(first!, rest)).toHaveProperty("lease");
    const database = fenced(plain, node, { global });
    closing.push(() => node.leave());
    return { plain, node, database, lost, ...(await openPort(database, parts)) };
  }

  return { COUNT, range, keysOf, message, logger, schema16, openPlain, openOwner, openPort };
}
