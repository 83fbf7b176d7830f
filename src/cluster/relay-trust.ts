// The owner's side of the relay (docs/scale-out.md "Relay"): a request that carries the schema's
// relay secret came through a standby, which already applied the edge checks (Host, Origin, the
// token lockout) for the client it names in x-forwarded-for. Anything else is an ordinary request.
import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { isIP } from "node:net";
import { RELAY_SECRET_HEADER } from "./relay-secret.js";

/** Where a trusted relayed request keeps its client, set once at the server's edge. */
const RELAYED_CLIENT = Symbol("switchboard.relayedClient");

type MarkedRequest = http.IncomingMessage & { [RELAYED_CLIENT]?: string };

/** Constant-time equality of two strings of any lengths (their digests are compared). */
function sameSecret(expected: string, given: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

/** The address a standby appended last to x-forwarded-for, when it is an IP address. */
function lastHop(header: string | string[] | undefined): string | undefined {
  const hop = [header ?? []].flat().join(",").split(",").at(-1)?.trim();
  return hop && isIP(hop) !== 0 ? hop : undefined;
}

/**
 * Takes the relay header off `req` and, when it holds `secret`, marks `req` relayed for the client
 * its x-forwarded-for names (else the socket's peer). Called once per request at the server's edge,
 * before any check reads the client or the Origin.
 */
export function acceptRelayed(req: http.IncomingMessage, secret: string | undefined): void {
  const given = req.headers[RELAY_SECRET_HEADER];
  if (given === undefined) return;
  delete req.headers[RELAY_SECRET_HEADER];
  if (secret === undefined || typeof given !== "string" || !sameSecret(secret, given)) return;
  (req as MarkedRequest)[RELAYED_CLIENT] =
    lastHop(req.headers["x-forwarded-for"]) ?? req.socket.remoteAddress ?? "unknown";
}

/** The client a trusted relayed request came from; undefined for a request that was not relayed. */
export function relayedClient(req: http.IncomingMessage): string | undefined {
  return (req as MarkedRequest)[RELAYED_CLIENT];
}
