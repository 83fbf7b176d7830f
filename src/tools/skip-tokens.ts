/** A reply that ends the agent-to-agent ping-pong. */
export const REPLY_SKIP = "REPLY_SKIP";
/** A reply that keeps an announce step silent. */
export const ANNOUNCE_SKIP = "ANNOUNCE_SKIP";

/** True when `reply` is (leniently) exactly `token`: case, quotes, emphasis and trailing punctuation ignored. */
export function isSkipToken(reply: string | undefined, token: string): boolean {
  if (reply === undefined) return false;
  const bare = reply.trim().replace(/^[\s"'`*_]+|[\s"'`*_.!]+$/g, "");
  return bare.toUpperCase() === token;
}
