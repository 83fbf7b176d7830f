/** `session.identityLinks` as two lookups, so a DM sender is resolved without walking every list. */
interface CompiledLinks {
  /** a listed id as written -> [canonical name, position in config order] */
  exact: Map<string, [string, number]>;
  /** `<channel lowercased>:<id>` of a listed `<channel>:<id>` -> [canonical name, position] */
  prefixed: Map<string, [string, number]>;
}

type Links = Readonly<Record<string, readonly string[]>>;

const compiled = new WeakMap<Links, CompiledLinks>();

function compile(links: Links): CompiledLinks {
  const exact = new Map<string, [string, number]>();
  const prefixed = new Map<string, [string, number]>();
  let position = 0;
  for (const [name, ids] of Object.entries(links)) {
    const canonical = name.trim().toLowerCase();
    if (!canonical) continue;
    for (const raw of ids) {
      const listed = raw.trim();
      const at = position++;
      // The first listing wins, as when the lists are walked in config order.
      if (listed && !exact.has(listed)) exact.set(listed, [canonical, at]);
      const colon = listed.indexOf(":");
      if (colon > 0) {
        const key = `${listed.slice(0, colon).toLowerCase()}:${listed.slice(colon + 1)}`;
        if (!prefixed.has(key)) prefixed.set(key, [canonical, at]);
      }
    }
  }
  return { exact, prefixed };
}

/**
 * The canonical person a DM sender is linked to, from the compiled form of `links` (built once
 * per links object; the config is not changed after it is loaded).
 */
export function lookupLinkedIdentity(links: Links, channel: string, id: string): string | undefined {
  let table = compiled.get(links);
  if (!table) {
    table = compile(links);
    compiled.set(links, table);
  }
  const bare = table.exact.get(id);
  const withChannel = table.prefixed.get(`${channel.trim().toLowerCase()}:${id}`);
  if (!bare) return withChannel?.[0];
  if (!withChannel) return bare[0];
  return bare[1] <= withChannel[1] ? bare[0] : withChannel[0];
}
