import type http from "node:http";
import { isIP } from "node:net";
import { relayedClient } from "../cluster/relay-trust.js";

/** `::ffff:10.0.0.1` -> `10.0.0.1`, so one client has one name whichever stack it came in on. */
function plainAddress(address: string): string {
  const trimmed = address.trim();
  return trimmed.toLowerCase().startsWith("::ffff:") && isIP(trimmed.slice(7)) === 4 ? trimmed.slice(7) : trimmed;
}

/**
 * The address failed attempts are counted against: the socket's peer, or, when that peer is a
 * trusted proxy (`gateway.trustedProxies`), the nearest address in `X-Forwarded-For` that is not
 * one. The header is read only from a trusted proxy: anyone else could write any address in it.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly string[],
): string {
  const peer = plainAddress(socketAddress ?? "unknown");
  const trusted = new Set(trustedProxies.map(plainAddress));
  if (!trusted.has(peer) || forwardedFor === undefined) return peer;
  const hops = [forwardedFor]
    .flat()
    .join(",")
    .split(",")
    .map(plainAddress)
    .filter((hop) => isIP(hop) !== 0);
  // Right to left: each trusted proxy appended the address it saw; the first untrusted one is the client.
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted.has(hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

/** The address a request's failed attempts count against: the client a trusted relay names (a standby did the edge checks), else {@link clientAddress}. */
export function requestClient(req: http.IncomingMessage, trustedProxies: readonly string[]): string {
  return relayedClient(req) ?? clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trustedProxies);
}
