import { lookupLinkedIdentity } from "./compiled-links.js";

/**
 * The canonical person a DM sender is linked to by `session.identityLinks`, or undefined.
 * A listed id matches as `<channel>:<id>` (channel compared case-insensitively) or as a bare id
 * on every channel; the platform id itself is compared exactly. Links are walked in config
 * order and the first match wins; the canonical name is lowercased, as key words are.
 */
export function resolveLinkedIdentity(
  links: Readonly<Record<string, readonly string[]>> | undefined,
  channel: string,
  peerId: string,
): string | undefined {
  const id = peerId.trim();
  if (!links || !id) return undefined;
  // A channel name never holds ":" in a key; the compiled lookup relies on that.
  return channel.includes(":") ? walkLinks(links, channel, id) : lookupLinkedIdentity(links, channel, id);
}

/** The first link listing `id` (trimmed, not empty), read link by link: for a channel name the compiled lookup cannot key. */
function walkLinks(
  links: Readonly<Record<string, readonly string[]>>,
  channel: string,
  id: string,
): string | undefined {
  const prefix = `${channel.trim().toLowerCase()}:`;
  for (const [name, ids] of Object.entries(links)) {
    const canonical = name.trim().toLowerCase();
    if (!canonical) continue;
    for (const raw of ids) {
      const listed = raw.trim();
      const bare = listed.toLowerCase().startsWith(prefix) ? listed.slice(prefix.length) : undefined;
      if (listed === id || bare === id) return canonical;
    }
  }
  return undefined;
}
