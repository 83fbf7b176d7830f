/** Levenshtein distance between two short strings. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length]!;
}

/** The words of a name, in order of the alphabet: `per-peer-channel` and `per-channel-peer` share them. */
const wordsOf = (name: string) =>
  name
    .toLowerCase()
    .split(/[-_.\s]+/)
    .sort()
    .join(" ");

/**
 * The candidate closest to `input` when it is plausibly a typo of it (a few letters off, or the same
 * words in another order), else undefined.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  const reordered = candidates.find((candidate) => wordsOf(candidate) === wordsOf(input));
  if (reordered) return reordered;
  let best: { value: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(needle, candidate.toLowerCase());
    if (!best || distance < best.distance) best = { value: candidate, distance };
  }
  if (!best) return undefined;
  const allowed = Math.max(2, Math.floor(Math.max(needle.length, best.value.length) / 3));
  return best.distance <= allowed ? best.value : undefined;
}
