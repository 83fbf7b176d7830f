import { closestMatch } from "../config/suggest.js";

/** One model the agent runtime can run. */
export interface ModelCatalogEntry {
  provider: string;
  model: string;
  aliases?: readonly string[];
}

/** The models `/new <model>` can pick from; the agent runtime fills it. */
export interface ModelCatalog {
  entries: readonly ModelCatalogEntry[];
}

/** What the first words of a reset remainder selected. */
export interface ModelSelection {
  model?: { provider: string; model: string };
  /** the remainder without the words that named the model */
  body: string;
}

const squash = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");

function fuzzy(word: string, entries: readonly ModelCatalogEntry[]): ModelCatalogEntry | undefined {
  const wanted = squash(word);
  if (!wanted) return undefined;
  const names = entries.flatMap((entry) =>
    [entry.model, `${entry.provider}/${entry.model}`, ...(entry.aliases ?? [])].map((name) => ({ name, entry })),
  );
  const exact =
    names.find(({ name }) => squash(name) === wanted) ?? names.find(({ name }) => squash(name).startsWith(wanted));
  if (exact) return exact.entry;
  const close = closestMatch(
    word,
    names.map(({ name }) => name),
  );
  return close === undefined ? undefined : names.find(({ name }) => name === close)?.entry;
}

function exact(word: string, entries: readonly ModelCatalogEntry[]): ModelCatalogEntry | undefined {
  const lower = word.toLowerCase();
  return entries.find(
    (e) => `${e.provider}/${e.model}`.toLowerCase() === lower || e.aliases?.some((a) => a.toLowerCase() === lower),
  );
}

/**
 * Reads a model from the first words of `/new <model> <text>` (docs/sessions.md):
 * `provider model`, then an exact alias or `provider/model`, then a fuzzy name (only for a
 * provider name or a word of six characters or more). No match: the whole remainder is the body.
 */
export function selectModel(remainder: string, catalog: ModelCatalog | undefined): ModelSelection {
  const entries = catalog?.entries ?? [];
  const words = /^(\S+)(?:\s+(\S+))?/.exec(remainder.trim());
  if (!words || entries.length === 0) return { body: remainder };
  const [first, second] = [words[1]!, words[2]];
  const rest = (count: number) =>
    remainder
      .trim()
      .replace(count === 2 ? /^\S+\s+\S+/ : /^\S+/, "")
      .trimStart();
  const pick = (entry: ModelCatalogEntry, count: number): ModelSelection => ({
    model: { provider: entry.provider, model: entry.model },
    body: rest(count),
  });
  const providerEntries = entries.filter((e) => e.provider.toLowerCase() === first.toLowerCase());
  if (providerEntries.length > 0 && second) {
    const hit = fuzzy(second, providerEntries);
    if (hit) return pick(hit, 2);
  }
  const direct = exact(first, entries);
  if (direct) return pick(direct, 1);
  if (providerEntries.length > 0) return pick(providerEntries[0]!, 1);
  if (first.length >= 6) {
    const hit = fuzzy(first, entries);
    if (hit) return pick(hit, 1);
  }
  return { body: remainder };
}
