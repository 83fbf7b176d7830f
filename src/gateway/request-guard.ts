import { timingSafeEqual } from "node:crypto";
import type http from "node:http";

/** Who may reach the gateway from a browser, and under which names. */
export interface RequestPolicy {
  /** the gateway token; when unset, only loopback callers and loopback (or allowed) Host names pass */
  token?: string | undefined;
  /** origins besides the gateway's own page, e.g. "https://ui.example.com" (`gateway.allowedOrigins`) */
  allowedOrigins: readonly string[];
  /** Host names besides loopback accepted without a token (`gateway.allowedHosts`) */
  allowedHosts: readonly string[];
}

/** True for 127.0.0.0/8, ::1, `localhost` and their IPv4-mapped forms. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.replace(/^::ffff:/, "");
  return plain === "::1" || plain === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(plain);
}

/** Constant-time token comparison. */
export function tokenMatches(expected: string | undefined, given: string | undefined): boolean {
  if (expected === undefined) return true;
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

/** `example.com:18789` -> `example.com`; `[::1]:80` -> `::1`. */
function hostnameOf(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]") > 0 ? host.indexOf("]") : undefined);
  const colon = host.lastIndexOf(":");
  return colon > 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host;
}

const normalizeOrigin = (origin: string) => origin.trim().toLowerCase().replace(/\/+$/, "");

/**
 * Why a request must be refused before it reaches a route (DNS rebinding, cross-site pages), or
 * undefined when it may go on. Without a token the `Host` must be a loopback name or an allowed
 * host; a browser `Origin` must be the gateway's own (same scheme-less host) or an allowed one.
 * Callers without an `Origin` (the CLI, curl) are not browsers and pass.
 */
export function refusalOf(req: http.IncomingMessage, policy: RequestPolicy): string | undefined {
  const host = req.headers.host;
  if (policy.token === undefined && host !== undefined) {
    const name = hostnameOf(host);
    const allowed =
      isLoopback(name) ||
      policy.allowedHosts.some((h) => h.trim().toLowerCase() === name || h.trim().toLowerCase() === host.toLowerCase());
    if (!allowed)
      return `Host "${host}" is not a loopback name; add it to gateway.allowedHosts or set gateway.auth.token`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const given = normalizeOrigin(origin);
  if (policy.allowedOrigins.some((o) => normalizeOrigin(o) === given)) return undefined;
  if (host !== undefined && (given === `http://${host.toLowerCase()}` || given === `https://${host.toLowerCase()}`))
    return undefined;
  return `Origin "${origin}" is not the gateway's own page; add it to gateway.allowedOrigins to allow it`;
}
