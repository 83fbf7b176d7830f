import type http from "node:http";
import { requestClient } from "../hooks/client-address.js";
import { createAuthLimiter } from "../hooks/hook-auth.js";
import { isLoopback, tokenMatches } from "./request-guard.js";

/** What {@link createTokenGuard} needs. */
export interface TokenGuardDeps {
  /** the gateway token; undefined: nothing to guess, nothing is counted */
  token: string | undefined;
  /** `gateway.trustedProxies` */
  trustedProxies: readonly string[];
  now: () => number;
}

/** Failed gateway-token attempts per client, as the system we re-implement counts them. */
const LIMITS = { maxFailures: 10, windowMs: 60_000, lockoutMs: 5 * 60_000 };

/**
 * Checks the gateway token (WebSocket `connect`, `POST /tools/invoke`) and rate-limits failed
 * attempts per client: 10 in a minute lock that client out for 5 minutes. Loopback clients are
 * never locked out, so an operator on the machine can always get in.
 */
export function createTokenGuard(deps: TokenGuardDeps) {
  const limiter = createAuthLimiter({ now: deps.now, ...LIMITS });
  return {
    /** The address attempts from `req` count against (see `requestClient`). */
    clientOf: (req: http.IncomingMessage): string => requestClient(req, deps.trustedProxies),
    /** Seconds `client` must wait before it may present a token again; 0 when it may now. */
    retryAfterSeconds(client: string): number {
      return deps.token === undefined || isLoopback(client) ? 0 : limiter.retryAfterSeconds(client);
    },
    /** Whether `given` is the token; a wrong one counts against `client`. */
    check(client: string, given: string | undefined): boolean {
      if (tokenMatches(deps.token, given)) {
        limiter.succeed(client);
        return true;
      }
      if (!isLoopback(client)) limiter.fail(client);
      return false;
    },
  };
}

/** A token check shared by the HTTP routes and the WebSocket connections of one gateway. */
export type TokenGuard = ReturnType<typeof createTokenGuard>;
