// The statements of the partition share (./partition-share.ts): how many members are live, and
// "take up to k of these leases that are free", not all or none as `acquireLeases` (./lease-sql.ts).
import type { Db, HeldLease } from "./lease-sql.js";
import { schemaChannel } from "./listen-channel.js";

/** The NOTIFY channel of the schema's partition share: a member joined, or gave partitions back. */
export const shareChannel = (schema: string): string => schemaChannel("share", schema);

/** Tells the schema's other members to run a pass now (`from`: this incarnation, which ignores its own). */
export async function notifyShare(db: Db, channel: string, from: string): Promise<void> {
  await db.query("SELECT pg_notify($1, $2)", [channel, from]);
}

/** A live member: its incarnation and its liveness lock (a peer waits on it to learn of its death at once). */
export interface LiveMember {
  incarnation: string;
  lockKey: string;
}

/**
 * The live members of the schema, in node id order: liveness lock held (`cluster_node_alive`) and a
 * heartbeat younger than `ttlMs`. A paused member (SIGSTOP) keeps its lock but stops beating: past
 * the TTL its leases have expired and it no longer counts, so the others take its share. `self` always counts.
 */
export async function liveMembers(db: Db, self: string, ttlMs: number): Promise<LiveMember[]> {
  const { rows } = await db.query<{ incarnation: string; lock_key: string }>(
    `SELECT m.incarnation, m.lock_key::text AS lock_key FROM cluster_members m
     WHERE m.incarnation = $1
        OR (m.heartbeat_at > now() - $2 * interval '1 millisecond' AND cluster_node_alive(m.incarnation))
     ORDER BY m.node_id`,
    [self, ttlMs],
  );
  const live = rows.map((row) => ({ incarnation: row.incarnation, lockKey: row.lock_key }));
  return live.some((member) => member.incarnation === self) ? live : [...live, { incarnation: self, lockKey: "" }];
}

/**
 * {@link takeFreeLeases}' statement. `free` is, in the order of `$1` (the caller's preference), up to
 * `$4` leases that are free in the statement's snapshot: never held, released, expired, or held by a
 * member whose liveness lock is gone (`pg_locks` asked once per other holder, not once per lease:
 * `others` is MATERIALIZED, else the planner pushes `cluster_node_alive` down to every row, 0.4 ms each).
 * Nothing free: nothing is written nor locked. The upsert takes them in name order (as
 * `cluster_check_fences` locks them) and its WHERE checks each row again as it takes it: a row a
 * peer took since the snapshot is current and of a live holder, so it is skipped, never shared.
 * A takeover raises the fence by one; a lease this incarnation held and did not release keeps its fence.
 * A last row (name null) carries how many were seen free: more than taken means a peer took some first.
 */
const TAKE_FREE = `
WITH want AS (SELECT name, ord FROM unnest($1::text[]) WITH ORDINALITY AS w(name, ord)),
seen AS (SELECT w.name, w.ord, l.owner, l.expires_at FROM want w LEFT JOIN cluster_leases l USING (name)),
others AS MATERIALIZED (SELECT DISTINCT owner FROM seen WHERE owner <> $2 AND expires_at > now()),
dead AS (SELECT owner FROM others WHERE NOT cluster_node_alive(owner)),
free AS (
  SELECT name FROM seen WHERE owner IS NULL OR expires_at <= now() OR owner IN (SELECT owner FROM dead)
  ORDER BY ord LIMIT $4
),
taken AS (
  INSERT INTO cluster_leases AS l (name, owner, fence, expires_at)
  SELECT name, $2, 1, now() + $3 * interval '1 millisecond' FROM free ORDER BY name
  ON CONFLICT (name) DO UPDATE SET
    fence = CASE WHEN l.owner = excluded.owner AND l.expires_at > '-infinity' THEN l.fence ELSE l.fence + 1 END,
    acquired_at = CASE WHEN l.owner = excluded.owner AND l.expires_at > '-infinity' THEN l.acquired_at ELSE now() END,
    owner = excluded.owner, expires_at = excluded.expires_at
  WHERE l.expires_at <= now() OR l.owner IN (SELECT owner FROM dead)
  RETURNING name, fence
)
SELECT name, fence FROM taken
UNION ALL SELECT NULL, count(*) FROM free`;

/** What {@link takeFreeLeases} took, and whether a peer took some of the ones it saw free first. */
export interface TakenLeases {
  leases: HeldLease[];
  /** more were free in the statement's snapshot than it took: a pass again may find others free */
  contended: boolean;
}

/**
 * Takes for `owner` (an incarnation) up to `limit` of the leases `names` that are free, preferring
 * them in the order given, in ONE statement. Two members taking at once get disjoint leases (the
 * one that waited on the other's rows skips them). The leases taken are in the order of `names`.
 */
export async function takeFreeLeases(
  db: Db,
  names: readonly string[],
  owner: string,
  ttlMs: number,
  limit: number,
): Promise<TakenLeases> {
  if (limit <= 0 || names.length === 0) return { leases: [], contended: false };
  const { rows } = await db.query<{ name: string | null; fence: string }>(TAKE_FREE, [names, owner, ttlMs, limit]);
  const fences = new Map(rows.flatMap((row) => (row.name === null ? [] : [[row.name, Number(row.fence)] as const])));
  const seen = Number(rows.find((row) => row.name === null)?.fence ?? 0);
  const leases = names.filter((name) => fences.has(name)).map((name) => ({ name, fence: fences.get(name)! }));
  return { leases, contended: seen > leases.length };
}
