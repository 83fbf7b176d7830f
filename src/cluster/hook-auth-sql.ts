// The hooks' lockout kept in PostgreSQL (migration 0007): the owner and every standby count a
// client's failed tokens in one row, so the limit is the cluster's, not each gateway's (a balancer
// spreading guesses over N gateways still gets 5 per window), and a takeover keeps it. The numbers
// and answers are the in-memory limiter's (src/hooks/hook-auth.ts).
import type pg from "pg";
import type { AuthLimiterDeps, HookAuthLimiter } from "../hooks/hook-auth.js";

/** A row's window is over (its lockout, or its window when not locked): the next failure starts a new one. */
const OVER = "COALESCE(f.locked_until_ms, f.since_ms + $4::bigint) <= $2::bigint";

/**
 * One failure, counted atomically (concurrent failures on several gateways all count):
 * $1 client, $2 now, $3 max failures, $4 window ms, $5 lockout ms (null: until the window ends).
 */
const FAIL_SQL = `
INSERT INTO hook_auth_failures AS f (client, failures, since_ms, locked_until_ms)
VALUES ($1, 1, $2::bigint, CASE WHEN 1 >= $3::int THEN $2::bigint + COALESCE($5::bigint, $4::bigint) END)
ON CONFLICT (client) DO UPDATE SET
  failures = CASE WHEN ${OVER} THEN 1 ELSE f.failures + 1 END,
  since_ms = CASE WHEN ${OVER} THEN $2::bigint ELSE f.since_ms END,
  locked_until_ms = CASE
    WHEN (CASE WHEN ${OVER} THEN 1 ELSE f.failures + 1 END) < $3::int THEN NULL
    WHEN $5::bigint IS NOT NULL THEN $2::bigint + $5::bigint
    ELSE (CASE WHEN ${OVER} THEN $2::bigint ELSE f.since_ms END) + $4::bigint
  END`;

/** The lockout of the schema `pool()` reaches (undefined: not joined yet, so every call rejects: the caller answers 503). */
export function postgresHookAuthLimiter(pool: () => pg.Pool | undefined, deps: AuthLimiterDeps): HookAuthLimiter {
  const maxFailures = deps.maxFailures ?? 5;
  const windowMs = deps.windowMs ?? 60_000;
  const db = () => {
    const joined = pool();
    if (!joined) throw new Error("this gateway has not joined its cluster yet");
    return joined;
  };
  return {
    async retryAfterSeconds(client) {
      const now = deps.now();
      const { rows } = await db().query<{ until: string }>(
        "SELECT locked_until_ms AS until FROM hook_auth_failures WHERE client = $1 AND locked_until_ms > $2",
        [client, now],
      );
      return rows[0] ? Math.ceil((Number(rows[0].until) - now) / 1000) : 0;
    },
    async fail(client) {
      const now = deps.now();
      const params = [client, now, maxFailures, windowMs, deps.lockoutMs ?? null];
      await db().query(FAIL_SQL, params);
      // Bounded under a spray of addresses: rows whose window is over go (the in-memory limiter forgets them too).
      await db().query(
        "DELETE FROM hook_auth_failures WHERE COALESCE(locked_until_ms, since_ms + $2::bigint) <= $1::bigint",
        [now, windowMs],
      );
    },
    async succeed(client) {
      await db().query("DELETE FROM hook_auth_failures WHERE client = $1", [client]);
    },
  };
}
