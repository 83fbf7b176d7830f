import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";

/** The token a hook request presents: `Authorization: Bearer <t>` or `x-switchboard-token: <t>`. */
export function presentedToken(req: http.IncomingMessage): string | undefined {
  // The scheme in any case, as the gateway's own bearer check reads it.
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
  if (bearer !== undefined) return bearer;
  const custom = req.headers["x-switchboard-token"];
  return typeof custom === "string" ? custom.trim() : undefined;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Constant-time comparison: fixed-size digests, so neither content nor length leaks through timing. */
export function hookTokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(expected), digest(given));
}

/** Dependencies of {@link createAuthLimiter}. */
export interface AuthLimiterDeps {
  now: () => number;
  /** failures allowed per client within the window; default 5 */
  maxFailures?: number;
  /** default 60 000 ms */
  windowMs?: number;
  /** how long a client over the limit waits, from its last counted failure; default: until its window ends */
  lockoutMs?: number;
}

/**
 * Counts failed authentications per client (the hooks' token, the gateway token); a client over
 * the limit waits out its lockout. Clients are whatever the caller names them (see `clientAddress`).
 */
export function createAuthLimiter(deps: AuthLimiterDeps) {
  const maxFailures = deps.maxFailures ?? 5;
  const windowMs = deps.windowMs ?? 60_000;
  const failures = new Map<string, { count: number; since: number; lockedUntil?: number }>();

  function current(client: string) {
    const entry = failures.get(client);
    const now = deps.now();
    if (entry && (entry.lockedUntil ?? entry.since + windowMs) <= now) {
      failures.delete(client);
      return undefined;
    }
    return entry;
  }

  return {
    /** Seconds the client must wait before trying again; 0 when it may try now. */
    retryAfterSeconds(client: string): number {
      const until = current(client)?.lockedUntil;
      return until === undefined ? 0 : Math.ceil((until - deps.now()) / 1000);
    },
    fail(client: string): void {
      const entry = current(client) ?? { count: 0, since: deps.now() };
      entry.count += 1;
      if (entry.count >= maxFailures)
        entry.lockedUntil = deps.lockoutMs === undefined ? entry.since + windowMs : deps.now() + deps.lockoutMs;
      failures.delete(client);
      failures.set(client, entry);
      // Bounded memory under a spray of addresses: the least recently failing entries go first.
      if (failures.size > 10_000) failures.delete(failures.keys().next().value!);
    },
    succeed(client: string): void {
      failures.delete(client);
    },
  };
}

/**
 * The hooks' lockout as the handler uses it. Each attempt's answer is decided atomically with its
 * count: past `maxFailures` wrong tokens in the window every attempt is refused, right token or not,
 * so at most that many guesses of one client get an answer that tells anything, however many arrive
 * at once; a right token before that clears the count. Asynchronous, so a cluster can keep it in its
 * database (src/cluster/hook-auth-sql.ts).
 */
export interface HookAuthLimiter {
  /** counts one attempt whose token was `right` (compared in constant time); seconds the client must wait (refused), or 0 */
  attempt(client: string, right: boolean): Promise<number>;
}

/** One gateway's lockout in memory (the local backend: one gateway, nothing to share; synchronous, so each attempt is atomic). */
export function memoryHookAuthLimiter(deps: AuthLimiterDeps): HookAuthLimiter {
  const limiter = createAuthLimiter(deps);
  return {
    async attempt(client, right) {
      const wait = limiter.retryAfterSeconds(client);
      if (wait === 0 && right) limiter.succeed(client);
      else if (wait === 0) limiter.fail(client);
      return wait;
    },
  };
}
