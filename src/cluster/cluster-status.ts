// What `switchboard cluster status` and the `cluster.status` method show: the members of one
// schema, whether each is alive (its liveness lock held), its last heartbeat, and the leases it holds.
import type { Db } from "./lease-sql.js";

/** What the status says on the local backend (the CLI and the `cluster.status` method). */
export const LOCAL_CLUSTER_NOTE =
  'the local backend is single-gateway: one gateway per $SWITCHBOARD_HOME (gateway.lock); set state.backend: "postgres" to share state between gateways';

/** The schema version whose cluster tables the status reads (0004_cluster.sql, with 0005_cluster_relay.sql's addresses). */
export const CLUSTER_SCHEMA_VERSION = 5;

/** One lease as the status shows it. */
interface LeaseView {
  name: string;
  fence: number;
  /** ms until it expires, by the server's clock (negative: expired, not yet taken) */
  expiresInMs: number;
}

/** The lease of the schema's owner: the gateway that runs every turn and channel (docs/scale-out.md). */
export const WRITER_LEASE = "schema:writer";

/** What a partition's lease is named: `partition:<n>` (the owner holds one per partition of the schema, docs/scale-out.md). */
const PARTITION_LEASE_PREFIX = "partition:";

/** The leases of a schema's `count` partitions: `partition:0` .. `partition:<count - 1>`. */
export function partitionLeases(count: number): string[] {
  return Array.from({ length: count }, (_, n) => `${PARTITION_LEASE_PREFIX}${n}`);
}

/** The lease of partition `part`, or the writer lease for rows of no session (null). */
export function leaseOfPart(part: number | null): string {
  return part === null ? WRITER_LEASE : `${PARTITION_LEASE_PREFIX}${part}`;
}

/** What an account's lease is named: `account:<channel>:<accountId>`. */
export const ACCOUNT_LEASE_PREFIX = "account:";

/** One gateway of the schema. */
export interface MemberView {
  nodeId: string;
  /** this process of the node (node id + random): the owner its leases and fenced writes carry */
  incarnation: string;
  host: string;
  pid: number;
  port: number;
  /** "host:port" where peers reach it; null before it listens (or a gateway of a version without it) */
  address: string | null;
  /** owner: holds the schema's writer lease and runs every turn; standby: relays to the owner and waits to take over */
  role: "owner" | "standby";
  /** the sessions it owns: those of the partitions it holds (one owner: every session row of the schema; a standby: 0) */
  sessionsOwned: number;
  /** their keys, when asked for (`cluster status --json`) */
  sessionKeys?: string[];
  /** the channel accounts it holds (`<channel>:<accountId>`, from its `account:` leases) */
  accounts: string[];
  /** its liveness lock is held: false for a gateway that died without leaving */
  alive: boolean;
  startedAt: string;
  heartbeatAt: string;
  /** ms since its last heartbeat, by the server's clock */
  heartbeatAgeMs: number;
  /** how many partition leases (`partition:<n>`) it holds: one owner holds every one of the schema's; with `cluster.owners: "many"` each member a share */
  partitions: number;
  /** its other leases (the partitions' are counted in `partitions`, not listed) */
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
  address: string | null;
  owner: boolean;
  sessions_owned: string;
  alive: boolean;
  started_at: Date;
  heartbeat_at: Date;
  heartbeat_age_ms: number;
  partitions: number;
  parts: number[];
  leases: Array<{ name: string; fence: number; expires_in_ms: number }>;
}

/** A member's role and sessions: the holder of a current writer lease owns every session row of the schema. */
const MEMBER_ROLE = `
  (SELECT l.owner FROM cluster_leases l WHERE l.name = '${WRITER_LEASE}' AND l.expires_at > '-infinity') = m.incarnation`;

/**
 * The sessions a member owns: those of the partitions it holds (rows stored without a part, before
 * migration 0008: the writer's). One owner holds every partition; with `cluster.owners: "many"` each
 * member holds a share.
 */
const SESSIONS_OWNED = `
  (SELECT coalesce(sum(c.n), 0) FROM session_counts c WHERE
    (c.part IS NULL AND coalesce(${MEMBER_ROLE}, false))
    OR EXISTS (SELECT 1 FROM cluster_leases l WHERE l.name = '${PARTITION_LEASE_PREFIX}' || c.part
      AND l.owner = m.incarnation AND l.expires_at > '-infinity'))`;

/** The sessions of each partition, counted once for every member (one scan of the session rows, not one per member). */
const SESSION_COUNTS =
  "session_counts AS (SELECT part, count(*) AS n FROM state_rows WHERE tbl LIKE 'sessions:%' GROUP BY part)";

/** The partitions a member holds (`parts` of its row, for its session keys). */
const PARTS_HELD = `
  coalesce((SELECT array_agg(substr(l.name, ${PARTITION_LEASE_PREFIX.length + 1})::int) FROM cluster_leases l
    WHERE l.owner = m.incarnation AND l.expires_at > '-infinity' AND starts_with(l.name, '${PARTITION_LEASE_PREFIX}')), '{}')`;

interface SessionKey {
  key: string;
  part: number | null;
}

/** The key and partition of every session (`sessions:<agentId>` tables of the state rows). */
async function sessionKeys(db: Db): Promise<SessionKey[]> {
  const { rows } = await db.query<SessionKey>(
    "SELECT key, part FROM state_rows WHERE tbl LIKE 'sessions:%' ORDER BY tbl, ord",
  );
  return rows;
}

/** The keys of the sessions `row`'s member owns. */
function ownedKeys(row: MemberRow, keys: SessionKey[]): string[] {
  const held = new Set(row.parts);
  return keys.filter((one) => (one.part === null ? row.owner : held.has(one.part))).map((one) => one.key);
}

/** One member row as the status shows it. */
function memberView(row: MemberRow, keys: SessionKey[] | undefined): MemberView {
  const leases = row.leases.map((lease) => ({
    name: lease.name,
    fence: Number(lease.fence),
    expiresInMs: Math.round(lease.expires_in_ms),
  }));
  return {
    nodeId: row.node_id,
    incarnation: row.incarnation,
    host: row.host,
    pid: row.pid,
    port: row.port,
    address: row.address,
    role: row.owner ? "owner" : "standby",
    sessionsOwned: Number(row.sessions_owned),
    ...(keys && { sessionKeys: ownedKeys(row, keys) }),
    accounts: leases
      .filter((lease) => lease.name.startsWith(ACCOUNT_LEASE_PREFIX))
      .map((lease) => lease.name.slice(ACCOUNT_LEASE_PREFIX.length)),
    alive: row.alive,
    startedAt: row.started_at.toISOString(),
    heartbeatAt: row.heartbeat_at.toISOString(),
    heartbeatAgeMs: Math.round(row.heartbeat_age_ms),
    partitions: row.partitions,
    leases,
  };
}

/** Reads every member, its role and its unreleased leases in one statement; with `keys`, also the owner's session keys. */
export async function readClusterStatus(db: Db, options: { keys?: boolean } = {}): Promise<ClusterStatus> {
  const { rows } = await db.query<MemberRow>(
    `WITH ${SESSION_COUNTS}
     SELECT m.node_id, m.incarnation, m.host, m.pid, m.port, m.address, coalesce(${MEMBER_ROLE}, false) AS owner,
       ${SESSIONS_OWNED} AS sessions_owned, ${PARTS_HELD} AS parts,
       cluster_node_alive(m.incarnation) AS alive, m.started_at, m.heartbeat_at,
       (extract(epoch FROM now() - m.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
       (SELECT count(*) FROM cluster_leases l WHERE l.owner = m.incarnation AND l.expires_at > '-infinity'
         AND starts_with(l.name, '${PARTITION_LEASE_PREFIX}'))::int AS partitions,
       coalesce((SELECT json_agg(json_build_object('name', l.name, 'fence', l.fence,
           'expires_in_ms', (extract(epoch FROM l.expires_at - now()) * 1000)::float8) ORDER BY l.name)
         FROM cluster_leases l WHERE l.owner = m.incarnation AND l.expires_at > '-infinity'
           AND NOT starts_with(l.name, '${PARTITION_LEASE_PREFIX}')), '[]') AS leases
     FROM cluster_members m ORDER BY m.node_id`,
  );
  const keys = options.keys ? await sessionKeys(db) : undefined;
  return { backend: "postgres", members: rows.map((row) => memberView(row, keys)) };
}
