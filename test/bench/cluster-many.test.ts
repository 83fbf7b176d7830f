// The cluster bench reads each gateway's partitions from its "holding partitions" log line
// (`parts`: src/state/postgres/held-parts.ts `shown`); a change of that format must fail here, not
// make the bench pick a session the killed gateway did not hold.
import { describe, expect, it } from "vitest";
import { partsOf } from "../../bench/cluster-many.js";
import { heldParts } from "../../src/state/postgres/held-parts.js";

describe("bench cluster-many: partsOf", () => {
  it("reads back every set the log line shows: ranges, single partitions, all and none", () => {
    const sets = [[0, 1, 2, 5], [255], [3, 9, 10, 11, 200], Array.from({ length: 86 }, (_, i) => 170 + i), []];
    for (const set of sets) expect([...partsOf(heldParts(set, 256).shown)]).toEqual(set);
    expect(partsOf(heldParts(undefined, 256).shown).size).toBe(256);
    expect([...partsOf("none")]).toEqual([]);
  });

  it("refuses what is not a partition range, with the text it could not read", () => {
    expect(() => partsOf("0-2, x")).toThrow('not a partition range: "x"');
  });
});
