// The cluster's statements (migration 0004_cluster.sql): membership, leases with fences, and the
// fence check a write transaction runs first. Every time compared is the server's (now()).
import type pg from "pg";
import { SwitchboardError } from "../errors.js";

/** A pool or one connection: every statement here is a single round trip. */
export type Db = pg.Pool | pg.ClientBase;

/** What a gateway says about itself in `cluster_members`. */
export interface MemberInfo {
  nodeId: string;
  /** this process's name (node id + random), the `owner` of its leases */
  incarnation: string;
  host: string;
  pid: number;
  port: number;
  /** its liveness lock (./liveness.ts) */
  lockKey: string;
  /** "host:port" where peers reach it, once it listens */
  address?: string;
  /** its `cluster.owners` (migration 0014; src/cluster/routing-check.ts compares it at join) */
  owners?: "one" | "many";
}

/** A lease this gateway holds: its writes carry `fence`. */
export interface HeldLease {
  name: string;
  fence: number;
}

/** Who holds a lease another gateway asked for. */
export interface LeaseHolder {
  /** the holder's node id (its incarnation when it is no longer a member) */
  owner: string;
  fence: number;
  host?: string;
  pid?: number;
  port?: number;
  /** "host:port" where peers reach it (null for a gateway of a version before migration 0005, or not listening yet) */
  address?: string;
}

/** The error of a write whose fence is stale: another gateway took the lease over. */
export class FencedOutError extends SwitchboardError {
  constructor(lease: HeldLease, owner: string, options: { cause?: unknown } = {}) {
    super(
      "BUSY",
      `gateway ${owner} no longer holds lease "${lease.name}" with fence ${lease.fence}: another gateway took it over, so this write is refused`,
      options,
    );
  }
}

/** The SQLSTATE `cluster_check_fence` (migration 0004) raises for a stale fence. */
const FENCED_OUT_SQLSTATE = "SBF01";

/** True when `err` is a statement refused by `cluster_check_fence`: its fence is stale. */
export function isFenceRefusal(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === FENCED_OUT_SQLSTATE;
}

/**
 * Registers (or re-registers, after a restart under the same node id) a member; its heartbeat is now.
 * A re-registration replaces the old incarnation, whose leases then belong to no live member.
 */
export async function joinMember(db: Db, member: MemberInfo): Promise<void> {
  const { nodeId, incarnation, host, pid, port, lockKey } = member;
  await db.query(
    `INSERT INTO cluster_members (node_id, incarnation, host, pid, port, lock_key, address, owners) VALUES ($1, $2, $3, $4, $5, $6::bigint, $7, $8)
     ON CONFLICT (node_id) DO UPDATE SET incarnation = excluded.incarnation, host = excluded.host, pid = excluded.pid, port = excluded.port,
       lock_key = excluded.lock_key, address = excluded.address, owners = excluded.owners, started_at = now(), heartbeat_at = now()`,
    [nodeId, incarnation, host, pid, port, lockKey, member.address ?? null, member.owners ?? null],
  );
}

/**
 * Forgets members that died without leaving (liveness lock gone), beat last more than `ttlMs` ago
 * and hold no lease that is still current, so the status does not list them for ever.
 */
export async function pruneDeadMembers(db: Db, ttlMs: number): Promise<void> {
  await db.query(
    `DELETE FROM cluster_members m
     WHERE m.heartbeat_at < now() - $1 * interval '1 millisecond' AND NOT cluster_node_alive(m.incarnation)
       AND NOT EXISTS (SELECT 1 FROM cluster_leases l WHERE l.owner = m.incarnation AND l.expires_at > now())`,
    [ttlMs],
  );
}

/** Records the port a member listens on once it does (`--port 0` picks one), and where peers reach it. */
export async function setMemberAddress(db: Db, incarnation: string, port: number, address: string): Promise<void> {
  await db.query("UPDATE cluster_members SET port = $2, address = $3 WHERE incarnation = $1", [
    incarnation,
    port,
    address,
  ]);
}

/**
 * The rows of `$1`'s current leases locked in name order, as `cluster_check_fences` and a takeover
 * lock them: an UPDATE of several lease rows locking them in its scan's order could wait on a batch
 * holding one of them FOR SHARE while that batch waits on another it holds, a deadlock.
 */
const OWN_LEASES = `
mine AS (
  SELECT name FROM cluster_leases WHERE owner = $1 AND expires_at > '-infinity' ORDER BY name FOR UPDATE
)`;

/** One heartbeat: the member's time and every lease its incarnation still owns renewed, in ONE statement; returns those leases. */
export async function heartbeat(db: Db, owner: string, ttlMs: number): Promise<HeldLease[]> {
  const { rows } = await db.query<{ name: string; fence: string }>(
    `WITH beat AS (UPDATE cluster_members SET heartbeat_at = now() WHERE incarnation = $1), ${OWN_LEASES}
     UPDATE cluster_leases l SET expires_at = now() + $2 * interval '1 millisecond' FROM mine
     WHERE l.name = mine.name AND l.owner = $1 RETURNING l.name, l.fence`,
    [owner, ttlMs],
  );
  return rows.map((row) => ({ name: row.name, fence: Number(row.fence) }));
}

/**
 * Takes the leases `names` together for `owner` (an incarnation), in ONE statement, when every one
 * is free: never held, released, expired, or held by a gateway whose liveness lock is gone (asked of
 * `pg_locks` once per holder, not once per lease). A takeover raises a lease's fence by one; the same
 * process asking again for a lease it did not release keeps its fence (nobody else wrote meanwhile:
 * an incarnation is never shared, not even by a later process under the same node id). Rows are
 * taken in name order, as `cluster_check_fences` locks them. Returns the leases (in the order of
 * `names`), or who holds the first one still held (`held`: its name); a peer that took one of them in the same instant
 * gets the ones it took back here: released, so nothing is held by halves.
 */
export async function acquireLeases(
  db: Db,
  names: readonly string[],
  owner: string,
  ttlMs: number,
): Promise<{ leases: HeldLease[] } | { holder: LeaseHolder; held: string }> {
  const { rows } = await db.query<{ name: string; fence: string }>(ACQUIRE, [names, owner, ttlMs]);
  const fences = new Map(rows.map((row) => [row.name, Number(row.fence)]));
  const missing = names.find((name) => !fences.has(name));
  if (missing === undefined) return { leases: names.map((name) => ({ name, fence: fences.get(name)! })) };
  await releaseLeases(
    db,
    owner,
    [...fences].map(([name, fence]) => ({ name, fence })),
  );
  return { holder: await leaseHolder(db, missing), held: missing };
}

/**
 * {@link acquireLeases}' statement: `live` is the other holders still alive of a lease asked for and
 * not expired (none: every lease is free); the upsert's WHERE checks each row again as it takes it
 * (a peer may have taken it since the statement's snapshot), asking `pg_locks` only for an unexpired
 * row of a holder not already seen dead.
 */
const ACQUIRE = `
WITH want AS (SELECT DISTINCT unnest($1::text[]) AS name),
others AS (
  SELECT DISTINCT l.owner FROM cluster_leases l JOIN want USING (name) WHERE l.owner <> $2 AND l.expires_at > now()
),
live AS (SELECT owner FROM others WHERE cluster_node_alive(owner)),
dead AS (SELECT owner FROM others EXCEPT SELECT owner FROM live)
INSERT INTO cluster_leases AS l (name, owner, fence, expires_at)
SELECT name, $2, 1, now() + $3 * interval '1 millisecond' FROM want WHERE NOT EXISTS (SELECT 1 FROM live)
ORDER BY name
ON CONFLICT (name) DO UPDATE SET
  fence = CASE WHEN l.owner = excluded.owner AND l.expires_at > '-infinity' THEN l.fence ELSE l.fence + 1 END,
  acquired_at = CASE WHEN l.owner = excluded.owner AND l.expires_at > '-infinity' THEN l.acquired_at ELSE now() END,
  owner = excluded.owner, expires_at = excluded.expires_at
WHERE l.owner = excluded.owner OR l.expires_at <= now() OR l.owner IN (SELECT owner FROM dead)
  OR NOT cluster_node_alive(l.owner)
RETURNING name, fence`;

/** Takes lease `name` for `owner` when it is free ({@link acquireLeases} of one). Returns the lease, or who holds it. */
export async function acquireLease(
  db: Db,
  name: string,
  owner: string,
  ttlMs: number,
): Promise<{ lease: HeldLease } | { holder: LeaseHolder }> {
  const result = await acquireLeases(db, [name], owner, ttlMs);
  return "leases" in result ? { lease: result.leases[0]! } : { holder: result.holder };
}

/** Who holds `name` (and where it runs, while it is a member); owner "" when nobody does. */
export async function leaseHolder(db: Db, name: string): Promise<LeaseHolder> {
  const { rows } = await db.query<{
    owner: string;
    fence: string;
    host: string | null;
    pid: number | null;
    port: number | null;
    address: string | null;
  }>(
    `SELECT coalesce(m.node_id, l.owner) AS owner, l.fence, m.host, m.pid, m.port, m.address
     FROM cluster_leases l LEFT JOIN cluster_members m ON m.incarnation = l.owner WHERE l.name = $1`,
    [name],
  );
  const row = rows[0];
  // Released between the two statements: nobody holds it (the caller may ask again).
  if (!row) return { owner: "", fence: 0 };
  return {
    owner: row.owner,
    fence: Number(row.fence),
    ...(row.host !== null && { host: row.host }),
    ...(row.pid !== null && { pid: row.pid }),
    ...(row.port !== null && { port: row.port }),
    ...(row.address !== null && { address: row.address }),
  };
}

/**
 * How long a peer waits on the holder of `name`: its liveness key and the ms until the lease
 * expires (0 once released: `expires_at` is -infinity, which `now()` cannot be subtracted from).
 */
export async function holderWait(db: Db, name: string): Promise<{ key: string | null; ms: number } | undefined> {
  const { rows } = await db.query<{ key: string | null; ms: number }>(
    `SELECT m.lock_key AS key,
            CASE WHEN isfinite(l.expires_at) THEN greatest(0, extract(epoch FROM l.expires_at - now()) * 1000) ELSE 0 END::float8 AS ms
     FROM cluster_leases l LEFT JOIN cluster_members m ON m.incarnation = l.owner WHERE l.name = $1`,
    [name],
  );
  return rows[0];
}

/** Gives a lease up at once (it expires at -infinity; the row and its fence stay). False when it was no longer ours. */
export async function releaseLease(db: Db, owner: string, lease: HeldLease): Promise<boolean> {
  return (await releaseLeases(db, owner, [lease])) === 1;
}

/** Gives leases up at once, in ONE statement (a give-back of up to 257 must not cost a round trip each); how many were still ours. */
export async function releaseLeases(db: Db, owner: string, leases: readonly HeldLease[]): Promise<number> {
  if (leases.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE cluster_leases l SET expires_at = '-infinity' FROM unnest($2::text[], $3::bigint[]) AS g(name, fence)
     WHERE l.name = g.name AND l.owner = $1 AND l.fence = g.fence`,
    [owner, leases.map((lease) => lease.name), leases.map((lease) => lease.fence)],
  );
  return rowCount ?? 0;
}

/** A clean stop: every lease of the incarnation released and its row removed (not a later process's under the node id), in one statement. */
export async function leaveMember(db: Db, owner: string): Promise<void> {
  await db.query(
    `WITH ${OWN_LEASES},
     released AS (UPDATE cluster_leases l SET expires_at = '-infinity' FROM mine WHERE l.name = mine.name AND l.owner = $1)
     DELETE FROM cluster_members WHERE incarnation = $1`,
    [owner],
  );
}

/** Options of {@link checkFence}. */
export interface FenceCheckOptions {
  /** also begin the transaction (a BEGIN of its own, first) */
  begin?: boolean;
  /**
   * the server ends this transaction's session once it idles this long inside it: a paused owner
   * (SIGSTOP, GC) must not hold the lease row's lock, and so block a takeover, for ever
   */
  idleTimeoutMs?: number;
}

/** The leases' rows, still ours with these fences, locked FOR SHARE (`cluster_check_fences`, migration 0010); the transaction's idle timeout set first (null: unchanged). */
const FENCE_CHECK = `
SELECT set_config('idle_in_transaction_session_timeout',
  coalesce($4::text, current_setting('idle_in_transaction_session_timeout')), true),
  cluster_check_fences($1::text[], $2::text, $3::bigint[])`;

/** The lease a refusal by `cluster_check_fences` names (its DETAIL), among `leases`; the first of them when it names none. */
export function refusedLease(err: unknown, leases: readonly HeldLease[]): HeldLease | undefined {
  const named = (err as { detail?: unknown } | null)?.detail;
  return leases.find((lease) => lease.name === named) ?? leases[0];
}

/**
 * The first statement of a fenced write transaction: locks the rows of `leases` (FOR SHARE, in name
 * order) while each is still ours with its fence, else throws {@link FencedOutError} naming the
 * stale one. A takeover (which updates a row) then waits for this transaction to end, and every
 * transaction after it is refused. Expiry alone refuses nothing: until another gateway takes a
 * lease, its owner is still the only writer. Parameters only; with `begin`, a BEGIN goes first.
 * Only the rare writes that do not fit the row writer's one statement pay that round trip: the
 * batch carries its check inside (`batch-sql.ts`).
 */
export async function checkFence(
  client: pg.ClientBase,
  owner: string,
  leases: HeldLease | readonly HeldLease[],
  options: FenceCheckOptions = {},
): Promise<void> {
  const all = Array.isArray(leases) ? (leases as readonly HeldLease[]) : [leases as HeldLease];
  if (options.begin) await client.query("BEGIN");
  const timeout = options.idleTimeoutMs ? String(Math.trunc(options.idleTimeoutMs)) : null;
  const values = [all.map((lease) => lease.name), owner, all.map((lease) => lease.fence), timeout];
  try {
    await client.query(FENCE_CHECK, values);
  } catch (err) {
    if (!isFenceRefusal(err)) throw err;
    throw new FencedOutError(refusedLease(err, all) ?? { name: "", fence: 0 }, owner, { cause: err });
  }
}
