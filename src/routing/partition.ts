// The partition of a session: where its rows are stored and, once sessions are spread over several
// gateways (docs/scale-out.md "The way there"), which gateway owns it. Every gateway of a schema must
// compute the same number for the same session for ever: a changed hash would move every session
// to another owner, so the hash is fixed here (test vectors in test/routing/partition.test.ts) and
// never PostgreSQL's `hashtext`, whose values are not promised stable across versions.

/** The number of partitions a schema starts with (its `cluster_settings` row `partitions`, migration 0008). */
export const DEFAULT_PARTITIONS = 256;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32 bits) of the UTF-8 bytes of `text`: small, fast, and the same in every language. */
function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * The partition of the session under canonical key `sessionKey` (as the session store keys it),
 * among `partitions` (the schema's count).
 */
export function partOf(sessionKey: string, partitions: number = DEFAULT_PARTITIONS): number {
  return fnv1a(sessionKey) % partitions;
}
