// Seeded generators of malformed Telegram updates for the fuzz tests: real fixtures with one field
// removed, retyped or blown up, updates of kinds we do not handle, and texts of 100k characters.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";

const dir = path.resolve(import.meta.dirname, "../fixtures/telegram");
/** Every Telegram fixture, as parsed JSON. */
const TELEGRAM_FIXTURES: Record<string, unknown>[] = readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .map((name) => JSON.parse(readFileSync(path.join(dir, name), "utf8")) as Record<string, unknown>);

/** Every path to a value inside `value` (objects and arrays), e.g. ["message", "chat", "id"]. */
function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== "object" || value === null) return [prefix];
  return [prefix, ...Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...prefix, key]))];
}

function withChange(value: unknown, at: string[], change: { remove: true } | { set: unknown }): unknown {
  if (at.length === 0) return "remove" in change ? undefined : change.set;
  const copy: Record<string, unknown> = Array.isArray(value)
    ? ([...value] as unknown as Record<string, unknown>)
    : { ...(value as Record<string, unknown>) };
  const [head, ...rest] = at as [string, ...string[]];
  const next = withChange(copy[head], rest, change);
  if (next === undefined) delete copy[head];
  else copy[head] = next;
  return copy;
}

const weird = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(null, -1, 0, 1.5, 2 ** 60, "", "0", true, [], {}, "x".repeat(100_000)),
);

/** One fixture with one field removed or replaced by something of another type or size. */
export const mutatedUpdate: fc.Arbitrary<unknown> = fc
  .constantFrom(...TELEGRAM_FIXTURES)
  .chain((fixture) =>
    fc.tuple(
      fc.constant(fixture),
      fc.constantFrom(...pathsOf(fixture).filter((p) => p.length > 0)),
      fc.option(weird, { nil: undefined }),
    ),
  )
  .map(([fixture, at, value]) => withChange(fixture, at, value === undefined ? { remove: true } : { set: value }));

/** Updates of kinds no adapter handles, or not updates at all. */
export const strangeUpdate: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ update_id: fc.nat(), poll: fc.anything({ maxDepth: 2 }) }),
  fc.record({ update_id: fc.nat(), my_chat_member: fc.anything({ maxDepth: 2 }) }),
  fc.record({ update_id: fc.nat(), message: weird }),
  fc.anything({ maxDepth: 2 }),
);

/** A DM (message id 888888, unlike any fixture) whose text is 100,000 characters long. */
export function hugeTextUpdate(updateId: number): unknown {
  const fixture = TELEGRAM_FIXTURES.find(
    (f) => (f.message as { chat?: { type?: string } } | undefined)?.chat?.type === "private",
  )!;
  const renumbered = withChange(withChange(fixture, ["update_id"], { set: updateId }), ["message", "message_id"], {
    set: 888_888,
  });
  return withChange(renumbered, ["message", "text"], { set: "y".repeat(100_000) });
}

/** `count` bad updates, the same for the same seed. */
export function badUpdates(seed: number, count: number): unknown[] {
  return fc.sample(fc.oneof({ weight: 4, arbitrary: mutatedUpdate }, { weight: 1, arbitrary: strangeUpdate }), {
    seed,
    numRuns: count,
  });
}
