// The partitions a PostgreSQL state port opens (docs/scale-out.md "The way there", step 7's
// preparation): all of them (one owner, today's gateway), or a set, whose rows alone are loaded and
// written. Rows of no session (part NULL) belong to every set, but only the global holder writes them.
import { ErrorCodes, SwitchboardError } from "../../errors.js";

/** The partitions a port opened. */
export interface HeldParts {
  /** every partition of the schema: nothing to filter or refuse */
  all: boolean;
  /** the partitions, in order (empty when `all`) */
  list: number[];
  /** whether a row under `part` is this port's (null, a row of no session: always) */
  holds(part: number | null): boolean;
  /** the set for an error message: "0-127", "3, 9-11" */
  shown: string;
}

/** Consecutive numbers as ranges: [0, 1, 2, 5] -> "0-2, 5". */
function ranges(sorted: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(", ") || "none";
}

/** `parts` of a schema of `count` partitions (undefined: all); a number outside 0..count-1 is refused. */
export function heldParts(parts: readonly number[] | undefined, count: number): HeldParts {
  const bad = (parts ?? []).filter((part) => !Number.isInteger(part) || part < 0 || part >= count);
  if (bad.length > 0)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `partitions to open must be whole numbers from 0 to ${count - 1} (the schema's count is ${count}); got ${bad.join(", ")}`,
    );
  const set = new Set(parts ?? []);
  const all = parts === undefined || set.size === count;
  const list = all ? [] : [...set].sort((a, b) => a - b);
  return { all, list, holds: (part) => all || part === null || set.has(part), shown: all ? "all" : ranges(list) };
}
