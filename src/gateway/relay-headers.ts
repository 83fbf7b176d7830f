// The headers a standby forwards to the owner and back (./owner-relay.ts): everything the client
// and the owner said, minus what belongs to one connection only (RFC 9110 7.6.1), plus who the
// client is and the secret that proves the standby relayed it.
import type http from "node:http";
import { RELAY_SECRET_HEADER } from "../cluster/relay-secret.js";

/** Headers that describe one hop's connection, never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** `headers` without the hop-by-hop ones, including those the Connection header names. */
function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = [headers.connection ?? ""]
    .join(",")
    .split(",")
    .map((name) => name.trim().toLowerCase());
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.includes(name)) kept[name] = value;
  return kept;
}

/**
 * What the owner gets: the client's end-to-end headers (Host and Origin as the client sent them),
 * `x-forwarded-for` replaced by the one client address the standby checked, and the relay secret.
 * `expect` is dropped: the standby already answered any 100-continue.
 */
export function relayRequestHeaders(
  headers: http.IncomingHttpHeaders,
  relay: { secret: string; client: string },
): http.OutgoingHttpHeaders {
  const { expect: _expect, ...forwarded } = endToEnd(headers);
  return { ...forwarded, "x-forwarded-for": relay.client, [RELAY_SECRET_HEADER]: relay.secret };
}

/** What the client gets back: the owner's end-to-end headers (Node frames the body again). */
export function relayResponseHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return endToEnd(headers);
}
