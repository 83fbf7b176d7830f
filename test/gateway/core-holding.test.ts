// A running core's partition moves (src/gateway/core-holding.ts, docs/scale-out.md "Partitions moved,
// not reopened"): the order of each step, which sessions each step is about, and an evict's cut.
import { describe, expect, it } from "vitest";
import { createLanes } from "../../src/agents/lanes.js";
import { holdingOf } from "../../src/gateway/core-holding.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { heldSet } from "../../src/state/parted-image.js";

const COUNT = 16;
const keyIn = (part: number, name: string) => {
  for (let i = 0; ; i++) if (partOf(`agent:main:dm:${name}-${i}`, COUNT) === part) return `agent:main:dm:${name}-${i}`;
};
const KEPT = keyIn(1, "kept");
const MOVED = keyIn(2, "moved");

/** A holding over fakes that log each step (with the sessions it was about) in `steps`. */
function holding(pending: Array<{ sessionKey: string; starts: number }> = []) {
  const steps: string[] = [];
  const lanes = createLanes();
  const routing = heldSet([1]);
  const about = (only: (key: string) => boolean) => [KEPT, MOVED].filter(only).join(",");
  const parts = {
    logger: createMemoryLogger(),
    state: {
      parted: {
        held: () => new Set<number>(),
        adopt: async (p: readonly number[]) => void steps.push(`state.adopt ${p}`),
        evict: async (p: readonly number[]) => void steps.push(`state.evict ${p}`),
      },
    },
    routing,
    database: { partitions: COUNT },
    lanes,
    inbox: {
      pending: () => pending,
      forgiveInterruptedStarts: async (only: (key: string) => boolean) => void steps.push(`forgive ${about(only)}`),
    },
    outbox: { pending: () => [] },
    gate: {
      pump: () => void steps.push(`pump routing=${[...routing.held()]}`),
      leave: async (only: (key: string) => boolean) => void steps.push(`leave ${about(only)}`),
    },
    pipeline: {
      async resume(only: (key: string) => boolean) {
        steps.push(`resume ${about(only)}`);
        return 0;
      },
    },
    subagents: { recoverAdopted: (only: (key: string) => boolean) => void steps.push(`recover ${about(only)}`) },
    handoff: { drain: async () => void steps.push(`drain routing=${[...routing.held()]}`) },
    runtime: { abortSession: (key: string) => void steps.push(`abort ${key}`) },
  };
  return { steps, lanes, routing, moves: holdingOf(parts as never as Parameters<typeof holdingOf>[0])! };
}

describe("a core's partition moves", () => {
  it("adopts: the state's rows first, then their entries replayed, then the routing takes them, their replies and sub-agents, and what waited in the hand-off inbox", async () => {
    const { steps, moves, routing } = holding();
    await moves.adopt([2, 1]);
    expect(steps).toEqual([
      "state.adopt 2",
      `resume ${MOVED}`,
      "pump routing=1,2",
      `recover ${MOVED}`,
      "drain routing=1,2",
    ]);
    expect([...routing.held()]).toEqual([1, 2]);
  });

  it("evicts: the routing lets go first, waits for the partition's turn, then stops its sends and the state's rows; nothing cut", async () => {
    const { steps, moves, routing, lanes } = holding();
    routing.add([2]);
    let finish!: () => void;
    void lanes.run(MOVED, () => new Promise<void>((resolve) => (finish = resolve)));
    void lanes.run(KEPT, () => new Promise<void>(() => {})); // another partition's turn never ends: not waited for
    const evicting = moves.evict([2], 60_000);
    await expect.poll(() => steps).toEqual(["drain routing=1"]);
    finish();
    expect(await evicting).toEqual({ cut: false });
    expect(steps).toEqual(["drain routing=1", `leave ${MOVED}`, "state.evict 2"]);
  });

  it("cuts a turn still running at the end of the drain: its start forgiven before, its run aborted once the state refuses its writes", async () => {
    const { steps, moves, routing, lanes } = holding([{ sessionKey: MOVED, starts: 1 }]);
    routing.add([2]);
    void lanes.run(MOVED, () => new Promise<void>(() => {}));
    expect(await moves.evict([2], 20)).toEqual({ cut: true });
    expect(steps).toEqual(["drain routing=1", `forgive ${MOVED}`, `leave ${MOVED}`, "state.evict 2", `abort ${MOVED}`]);
  });
});
