// A migrated PostgreSQL schema of a test file's own, and live cluster members on it: each member's
// liveness lock (src/cluster/liveness.ts) held by a connection of its own, so `cluster_node_alive`
// sees it alive until `die()` closes that connection. For the cluster's SQL tested without gateways.
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { joinMember } from "../../src/cluster/lease-sql.js";
import { livenessKey } from "../../src/cluster/liveness.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { freshSchema, usePostgres } from "./postgres.js";

/** A live member: its node id is its incarnation; `die()` frees its liveness lock, as a SIGKILL would. */
export interface LiveMember {
  nodeId: string;
  die(): Promise<void>;
}

/** Declares the file's schema (named `<prefix>_...`, opened before its tests, closed after) and returns how to reach it. */
export function useLiveMembers(prefix: string) {
  const db = usePostgres();
  const clients: pg.Client[] = [];
  let database: PostgresDatabase | undefined;
  beforeAll(async () => {
    const logger = createMemoryLogger();
    database = await openPostgresDatabase({ url: db.url, schema: freshSchema(prefix), logger, probeEveryMs: 0 });
  });
  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => {});
    await database?.close();
  });
  const opened = () => database!;
  return {
    database: opened,
    /** Joins `nodeId` as a live member of the schema. */
    async member(nodeId: string): Promise<LiveMember> {
      const lockKey = livenessKey(opened().schema, nodeId);
      const liveness = new pg.Client(opened().pool.options);
      clients.push(liveness);
      await liveness.connect();
      await liveness.query("SELECT pg_advisory_lock($1::bigint)", [lockKey]);
      await joinMember(opened().pool, { nodeId, incarnation: nodeId, host: "h", pid: 1, port: 1, lockKey });
      return { nodeId, die: () => liveness.end() };
    },
  };
}
