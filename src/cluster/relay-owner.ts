// Where a standby relays to: the live holder of the schema's writer lease and the address it
// recorded when it started listening (migration 0005).
import type { Db } from "./lease-sql.js";

/** The schema's owner as a standby reaches it. */
export interface RelayOwner {
  nodeId: string;
  /** "host:port" (`cluster.advertiseHost` and the port it listens on) */
  address: string;
}

/** The lease the schema's owner holds. */
const WRITER_LEASE = "schema:writer";

/**
 * The owner of the schema: the holder of `schema:writer` while its liveness lock is held and it
 * has an address; undefined when nobody does (between a SIGKILL and the takeover, before it listens).
 */
export async function readRelayOwner(db: Db): Promise<RelayOwner | undefined> {
  const { rows } = await db.query<{ node_id: string; address: string }>(
    `SELECT m.node_id, m.address FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
     WHERE l.name = $1 AND l.expires_at > '-infinity' AND m.address IS NOT NULL AND cluster_node_alive(l.owner)`,
    [WRITER_LEASE],
  );
  const row = rows[0];
  return row ? { nodeId: row.node_id, address: row.address } : undefined;
}
