// A peer call's proof (docs/scale-out.md "The peer call"): a key derived from the schema's relay
// secret, in a header of its own. The relay secret alone cannot tell a peer from a client: a
// standby's relay adds it to every request it relays, whatever the path. No relay sets this header,
// and a client cannot make its value without the secret.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The header a peer call carries its key in. */
export const PEER_KEY_HEADER = "x-switchboard-peer";

/** The key peers of a schema prove themselves with: HMAC-SHA256 of a fixed label under the relay secret. */
export function peerKey(secret: string): string {
  return createHmac("sha256", secret).update("switchboard peer call").digest("hex");
}

/** Whether `given` is the peer key of `secret`, compared in constant time (their digests, so any length). */
export function isPeerKey(secret: string, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(peerKey(secret)), digest(given));
}
