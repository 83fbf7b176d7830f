/** Remembers what a request with an idempotency key started, for `ttlMs`, at most `max` keys. */
export function createIdempotencyCache<T>(deps: { now: () => number; ttlMs?: number; max?: number }) {
  const ttlMs = deps.ttlMs ?? 24 * 3_600_000;
  const max = deps.max ?? 10_000;
  const entries = new Map<string, { value: T; at: number }>();
  return {
    get(key: string): T | undefined {
      const entry = entries.get(key);
      if (entry && deps.now() - entry.at < ttlMs) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key: string, value: T): void {
      entries.set(key, { value, at: deps.now() });
      if (entries.size > max) entries.delete(entries.keys().next().value!);
    },
  };
}
