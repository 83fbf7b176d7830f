// What `switchboard cluster status` and the `cluster.status` method show: the members of one
// schema, whether each is alive (its liveness lock held), its last heartbeat, and the leases it holds.
import type { Db } from "./lease-sql.js";

/** What the status says on the local backend (the CLI and the `cluster.status` method). */
export const LOCAL_CLUSTER_NOTE =
  'the local backend is single-gateway: one gateway per $SWITCHBOARD_HOME (gateway.lock); set state.backend: "postgres" to share state between gateways';

/** The schema version that added the cluster tables (migration 0004_cluster.sql). */
export const CLUSTER_SCHEMA_VERSION = 4;

/** One lease as the status shows it. */
interface LeaseView {
  name: string;
  fence: number;
  /** ms until it expires, by the server's clock (negative: expired, not yet taken) */
  expiresInMs: number;
}

/** One gateway of the schema. */
export interface MemberView {
  nodeId: string;
  /** this process of the node (node id + random): the owner its leases and fenced writes carry */
  incarnation: string;
  host: string;
  pid: number;
  port: number;
  /** its liveness lock is held: false for a gateway that died without leaving */
  alive: boolean;
  startedAt: string;
  heartbeatAt: string;
  /** ms since its last heartbeat, by the server's clock */
  heartbeatAgeMs: number;
  leases: LeaseView[];
}

/** The cluster as the database sees it. */
export interface ClusterStatus {
  backend: "postgres";
  members: MemberView[];
}

interface MemberRow {
  node_id: string;
  incarnation: string;
  host: string;
  pid: number;
  port: number;
  alive: boolean;
  started_at: Date;
  heartbeat_at: Date;
  heartbeat_age_ms: number;
  leases: Array<{ name: string; fence: number; expires_in_ms: number }>;
}

/** Reads every member and its unreleased leases in one statement. */
export async function readClusterStatus(db: Db): Promise<ClusterStatus> {
  const { rows } = await db.query<MemberRow>(
    `SELECT m.node_id, m.incarnation, m.host, m.pid, m.port, cluster_node_alive(m.incarnation) AS alive, m.started_at, m.heartbeat_at,
       (extract(epoch FROM now() - m.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
       coalesce((SELECT json_agg(json_build_object('name', l.name, 'fence', l.fence,
           'expires_in_ms', (extract(epoch FROM l.expires_at - now()) * 1000)::float8) ORDER BY l.name)
         FROM cluster_leases l WHERE l.owner = m.incarnation AND l.expires_at > '-infinity'), '[]') AS leases
     FROM cluster_members m ORDER BY m.node_id`,
  );
  return {
    backend: "postgres",
    members: rows.map((row) => ({
      nodeId: row.node_id,
      incarnation: row.incarnation,
      host: row.host,
      pid: row.pid,
      port: row.port,
      alive: row.alive,
      startedAt: row.started_at.toISOString(),
      heartbeatAt: row.heartbeat_at.toISOString(),
      heartbeatAgeMs: Math.round(row.heartbeat_age_ms),
      leases: row.leases.map((lease) => ({
        name: lease.name,
        fence: Number(lease.fence),
        expiresInMs: Math.round(lease.expires_in_ms),
      })),
    })),
  };
}
