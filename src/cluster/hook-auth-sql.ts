// The hooks' lockout kept in PostgreSQL (migration 0007): the owner and every standby count a
// client's attempts in one row, so the limit is the cluster's, not each gateway's (a balancer
// spreading guesses over N gateways still gets 5 per window), and a takeover keeps it. The numbers
// and answers are the in-memory limiter's (src/hooks/hook-auth.ts). The lockout is read, the
// attempt counted and its answer decided in one statement (the row lock orders concurrent
// attempts), so concurrent guesses cannot all pass a check that runs before any of them is
// counted. Every time is the server's clock, as the leases' (lease-sql.ts): gateways whose clocks
// differ keep one lockout. No pool of its own: a hook costs one indexed single-row statement (right
// or wrong token alike), the prune is bounded and throttled, and at most `maxConcurrent` statements
// per gateway run at once, so a flood of bad tokens queues in the gateway and never holds more than
// that many of the pool's connections the owner's writes use.
import type pg from "pg";

/** Options of {@link postgresHookAuthLimiter}: the in-memory limiter's numbers, and the tests' clock offset. */
export interface SqlAuthLimiterOptions {
  /** attempts allowed per client within the window; default 5 */
  maxFailures?: number;
  /** default 60 000 ms */
  windowMs?: number;
  /** how long a client at the limit waits, from the attempt that reached it; default: until its window ends */
  lockoutMs?: number;
  /** added to the server's clock (tests: advance time without waiting); default 0 */
  offsetMs?: () => number;
  /** expired rows are pruned at most this often per gateway; default 10 000 ms */
  pruneEveryMs?: number;
  /** lockout statements one gateway runs at once; default 2 */
  maxConcurrent?: number;
}

/** The server's clock in ms since the epoch, shifted by $2 (tests). */
const SERVER_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint + $2::bigint";

// In the upsert, `excluded.since_ms` is this attempt's time (the server's): $3 max, $4 window ms,
// $5 lockout ms or null, $6 whether the token was right.
const N = "excluded.since_ms";
const EXPIRED = `f.expires_ms <= ${N}`;
/** A right token while the client is not locked out clears the row (it expires at once). */
const CLEAR = `$6::boolean AND (${EXPIRED} OR f.failures < $3::int)`;
const COUNT = `CASE WHEN ${EXPIRED} THEN 1 ELSE LEAST(f.failures + 1, $3::int + 1) END`;
const SINCE = `CASE WHEN ${EXPIRED} THEN ${N} ELSE f.since_ms END`;
/** Set by the attempt that reaches the limit, kept by those after it (refused), gone with a new window. */
const LOCKED = `CASE WHEN ${COUNT} < $3::int THEN NULL
    WHEN ${COUNT} > $3::int THEN f.locked_until_ms
    WHEN $5::bigint IS NOT NULL THEN ${N} + $5::bigint
    ELSE ${SINCE} + $4::bigint END`;

/**
 * One attempt, its token already compared ($1 client, $6 right): the row after it and the server's
 * time. Refused (`failures` > max) past the limit, right token or not; the attempt reaching the
 * limit sets the lockout; a right token before it clears the row. One statement, the same for a
 * right and a wrong token, so the row lock orders concurrent attempts and timing tells nothing.
 */
const ATTEMPT_SQL = `
WITH clock AS (SELECT ${SERVER_NOW} AS now),
counted AS (
  INSERT INTO hook_auth_failures AS f (client, failures, since_ms, locked_until_ms, expires_ms)
  SELECT $1, CASE WHEN $6::boolean THEN 0 ELSE 1 END, now, l.until, COALESCE(l.until, now + $4::bigint)
  FROM clock, LATERAL (SELECT CASE WHEN 1 >= $3::int AND NOT $6::boolean THEN now + COALESCE($5::bigint, $4::bigint) END AS until) l
  ON CONFLICT (client) DO UPDATE SET
    failures = CASE WHEN ${CLEAR} THEN 0 ELSE ${COUNT} END,
    since_ms = CASE WHEN ${CLEAR} THEN ${N} ELSE ${SINCE} END,
    locked_until_ms = CASE WHEN ${CLEAR} THEN NULL ELSE ${LOCKED} END,
    expires_ms = CASE WHEN ${CLEAR} THEN ${N} ELSE COALESCE(${LOCKED}, ${SINCE} + $4::bigint) END
  RETURNING failures, locked_until_ms
)
SELECT counted.failures, counted.locked_until_ms AS until, clock.now FROM counted, clock`;

/** Up to 1 000 rows whose window is over ($1 limit, $2 offset), by the expiry index; rechecked so a row counted meanwhile stays. */
const PRUNE_SQL = `
DELETE FROM hook_auth_failures WHERE expires_ms <= ${SERVER_NOW} AND client IN (
  SELECT client FROM hook_auth_failures WHERE expires_ms <= ${SERVER_NOW} ORDER BY expires_ms LIMIT $1)`;

/** Runs at most `max` calls at once; the rest wait their turn in order. */
function limitConcurrency(max: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

/** The lockout of the schema `pool()` reaches (undefined: not joined yet, so every call rejects: the caller answers 503). */
export function postgresHookAuthLimiter(
  pool: () => pg.Pool | undefined,
  options: SqlAuthLimiterOptions = {},
): { attempt(client: string, right: boolean): Promise<number> } {
  const { maxFailures = 5, windowMs = 60_000, lockoutMs, pruneEveryMs = 10_000 } = options;
  const offset = options.offsetMs ?? (() => 0);
  const limited = limitConcurrency(options.maxConcurrent ?? 2);
  let prunedAt = Number.NEGATIVE_INFINITY;
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    limited(() => {
      const joined = pool();
      if (!joined) throw new Error("this gateway has not joined its cluster yet");
      return joined.query<R>(text, values);
    });
  // Throttled on this gateway's monotonic clock: how often, not when a row expires.
  async function prune() {
    if (performance.now() - prunedAt < pruneEveryMs) return;
    prunedAt = performance.now();
    await query(PRUNE_SQL, [1_000, offset()]);
  }
  return {
    async attempt(client, right) {
      const params = [client, offset(), maxFailures, windowMs, lockoutMs ?? null, right];
      const { rows } = await query<{ failures: number; until: string | null; now: string }>(ATTEMPT_SQL, params);
      await prune();
      const row = rows[0]!;
      if (row.failures <= maxFailures || row.until === null) return 0;
      return Math.ceil((Number(row.until) - Number(row.now)) / 1000);
    },
  };
}
