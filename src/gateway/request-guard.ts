import { timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { relayedClient } from "../cluster/relay-trust.js";

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

/**
 * The name of a `Host` header, parsed strictly: `example.com:18789` -> `example.com`, `[::1]:80` ->
 * `::1`; undefined for anything that is not a name or address with an optional port
 * (`127.0.0.1:80@evil.com`, spaces, paths), which is then refused.
 */
function hostnameOf(hostHeader: string): string | undefined {
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?))(?::(\d{1,5}))?$/.exec(
    hostHeader.trim().toLowerCase(),
  );
  return match ? (match[1] ?? match[2]) : undefined;
}

const normalizeOrigin = (origin: string) => origin.trim().toLowerCase().replace(/\/+$/, "");

/**
 * Why a browser `Origin` is refused, or undefined: it must be the gateway's own page (same
 * scheme-less host) or one of `allowedOrigins`. Callers without an `Origin` (the CLI, curl,
 * webhooks from servers) are not browsers and pass, and so does a trusted relayed request (its standby checked).
 */
export function originRefusal(req: http.IncomingMessage, allowedOrigins: readonly string[]): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined || relayedClient(req) !== undefined) return undefined;
  const given = normalizeOrigin(origin);
  if (allowedOrigins.some((o) => normalizeOrigin(o) === given)) return undefined;
  const host = req.headers.host?.toLowerCase();
  if (host !== undefined && (given === `http://${host}` || given === `https://${host}`)) return undefined;
  return `Origin "${origin}" is not the gateway's own page; add it to gateway.allowedOrigins to allow it`;
}

/**
 * Why a request must be refused before it reaches a route (DNS rebinding, cross-site pages), or
 * undefined when it may go on. Without a token the `Host` must be a loopback name or an allowed
 * host; a browser `Origin` must pass {@link originRefusal}. A trusted relayed request passes: its standby checked both.
 */
export function refusalOf(req: http.IncomingMessage, policy: RequestPolicy): string | undefined {
  const host = req.headers.host;
  if (policy.token === undefined && host !== undefined && relayedClient(req) === undefined) {
    const name = hostnameOf(host);
    const allowed =
      name !== undefined &&
      (isLoopback(name) ||
        policy.allowedHosts.some(
          (h) => h.trim().toLowerCase() === name || h.trim().toLowerCase() === host.toLowerCase(),
        ));
    if (!allowed)
      return `Host "${host}" is not a loopback name; add it to gateway.allowedHosts or set gateway.auth.token`;
  }
  return originRefusal(req, policy.allowedOrigins);
}
