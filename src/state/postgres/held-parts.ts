// The partitions a PostgreSQL state port holds (docs/scale-out.md "The way there", step 7, and
// "Partitions adopted and evicted one by one"): all of them (one owner, today's gateway), or a set,
// whose rows alone are loaded and written, and which grows and shrinks as the port adopts and
// evicts. Rows of no session (part NULL) belong to every set, but only the global holder writes them.
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { heldSet } from "../parted-image.js";

/** The partitions a port holds now. */
export interface HeldParts {
  /** every partition of the schema: nothing to filter or refuse */
  readonly all: boolean;
  /** the partitions, in order */
  readonly list: number[];
  /** whether a row under `part` is this port's (null, a row of no session: always) */
  holds(part: number | null): boolean;
  /** the set for an error message: "all", "3, 9-11" */
  readonly shown: string;
  held(): ReadonlySet<number>;
  /** holds `parts` from now on (a number outside the schema's is refused); returns those not held before */
  add(parts: readonly number[]): number[];
  /** holds `parts` no more */
  remove(parts: readonly number[]): void;
}

/** `parts` of a schema of `count` partitions (undefined: all); a number outside 0..count-1 is refused. */
export function heldParts(parts: readonly number[] | undefined, count: number): HeldParts {
  const checked = (given: readonly number[]) => {
    const bad = given.filter((part) => !Number.isInteger(part) || part < 0 || part >= count);
    if (bad.length > 0)
      throw new SwitchboardError(
        ErrorCodes.INVALID_ARGUMENT,
        `partitions to open must be whole numbers from 0 to ${count - 1} (the schema's count is ${count}); got ${bad.join(", ")}`,
      );
    return given;
  };
  const set = heldSet(checked(parts ?? Array.from({ length: count }, (_, n) => n)));
  return {
    get all() {
      return set.held().size === count;
    },
    get list() {
      return [...set.held()].sort((a, b) => a - b);
    },
    holds: set.holds,
    get shown() {
      return set.held().size === count ? "all" : set.shown;
    },
    held: set.held,
    add: (given) => set.add(checked(given)),
    remove: (given) => set.remove(checked(given)),
  };
}
