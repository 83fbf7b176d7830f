import { describe, expect, it } from "vitest";
import { createStartupSteps } from "../../src/gateway/startup-steps.js";

describe("createStartupSteps", () => {
  it("times each step from the end of the one before, in the order they ended, and adds a step marked twice", () => {
    let now = 1_000;
    const steps = createStartupSteps(() => now);
    now += 95.04;
    steps.mark("writerLease");
    now += 12.5;
    steps.mark("stateTables");
    now += 3;
    steps.mark("stateTables");
    expect(steps.report()).toEqual({ writerLease: 95, stateTables: 15.5 });
    expect(Object.keys(steps.report())).toEqual(["writerLease", "stateTables"]);
  });
});
