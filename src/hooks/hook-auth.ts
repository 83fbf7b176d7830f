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
}

/** Counts failed hook authentications per client address; a client over the limit waits out the window. */
export function createAuthLimiter(deps: AuthLimiterDeps) {
  const maxFailures = deps.maxFailures ?? 5;
  const windowMs = deps.windowMs ?? 60_000;
  const failures = new Map<string, { count: number; since: number }>();

  function current(client: string): { count: number; since: number } | undefined {
    const entry = failures.get(client);
    if (entry && deps.now() - entry.since >= windowMs) {
      failures.delete(client);
      return undefined;
    }
    return entry;
  }

  return {
    /** Seconds the client must wait before trying again; 0 when it may try now. */
    retryAfterSeconds(client: string): number {
      const entry = current(client);
      return entry && entry.count >= maxFailures ? Math.ceil((entry.since + windowMs - deps.now()) / 1000) : 0;
    },
    fail(client: string): void {
      const entry = current(client);
      if (entry) entry.count += 1;
      else failures.set(client, { count: 1, since: deps.now() });
      // Bounded memory under a spray of addresses: the oldest entries go first.
      if (failures.size > 10_000) failures.delete(failures.keys().next().value!);
    },
    succeed(client: string): void {
      failures.delete(client);
    },
  };
}
