// The sub-agent registry on a port whose partitions change while it runs (docs/scale-out.md
// "Partitions adopted and evicted one by one"): `recoverAdopted(only)` recovers the adopted runs as a
// restart recovers the runs left behind, once, and touches nothing else.
import { describe, expect, it } from "vitest";
import type { AgentRuntime } from "../../src/agents/agent-runtime.js";
import type { RunRecord } from "../../src/agents/run-registry.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import type { AgentSessionsPool } from "../../src/sessions/agent-sessions.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { StatePort } from "../../src/state/state-port.js";
import { createSubagentRegistry } from "../../src/tools/subagent-registry.js";
import type { AnnounceHandOver, SubagentRecord } from "../../src/tools/subagent-record.js";

const of = (sessionKey: string) => partOf(sessionKey, 16);
const never = new Promise<RunRecord>(() => undefined);

/** A child session key in partition `part` (the first of `agent:worker:subagent:<n>` that lands there). */
function childIn(part: number, tag: string): string {
  for (let n = 0; ; n++)
    if (of(`agent:worker:subagent:${tag}-${n}`) === part) return `agent:worker:subagent:${tag}-${n}`;
}

/** Three partitions: the registry's own, the adopted one, and one another gateway keeps. */
const [MINE, ADOPTED, OTHER] = [
  of("agent:main:main"),
  (of("agent:main:main") + 1) % 16,
  (of("agent:main:main") + 2) % 16,
];

/** A stored record of run `runId`, its child in partition `part`. */
function record(runId: string, part: number, fields: Partial<SubagentRecord> = {}): SubagentRecord {
  return {
    runId,
    childSessionKey: childIn(part, runId),
    childAgentId: "worker",
    requesterKey: "agent:main:main",
    origin: { channel: "telegram", to: "42" },
    task: "research X",
    cleanup: "keep",
    state: "running",
    createdAt: 500,
    ...fields,
  };
}

/** Stored sub-agent rows, as another gateway left them. */
function storedRecords(...records: SubagentRecord[]): MemoryStateData {
  return new Map([["subagents.json", new Map(records.map((r) => [r.runId, structuredClone(r)]))]]);
}

/** A registry on `state` whose announces are kept in `delivered`; `step` answers each announce step. */
function registryOn(state: StatePort, step: () => Promise<RunRecord> = async () => ok) {
  const delivered: string[] = [];
  const registry = createSubagentRegistry({
    state,
    path: "subagents.json",
    sessions: { forAgent: async () => ({ store: { get: () => undefined } }) } as unknown as AgentSessionsPool,
    runtime: () => ({ enqueue: () => ({ done: step() }) }) as unknown as AgentRuntime,
    handOver: async (announce: AnnounceHandOver) => void delivered.push(announce.id),
    stopChild: async () => undefined,
    handedOver: (id) => delivered.includes(id),
    archiveAfterMinutes: 60,
    logger: createMemoryLogger(),
    now: () => 1_000,
  });
  return { registry, delivered };
}
const ok = { status: "ok", text: "Result: found X" } as unknown as RunRecord;

/** A port on `data` holding the registry's own partition, able to adopt more. */
const partedPort = (data: MemoryStateData) => openMemoryState({ data, parts: { of, held: [MINE] } });
const inPart = (part: number) => (sessionKey: string) => of(sessionKey) === part;

describe("sub-agent registry, partitions adopted", () => {
  it("announces an adopted interrupted run once as an error and an adopted ended one; other sessions' records untouched", async () => {
    const data = storedRecords(
      record("interrupted", ADOPTED),
      record("unannounced", ADOPTED, { state: "ended", outcome: "success", endedAt: 800, result: "X" }),
      record("announced", ADOPTED, { state: "announced", outcome: "success", announcedAt: 900 }),
      record("queued", ADOPTED, { queued: true }),
      record("elsewhere", OTHER),
    );
    const state = partedPort(data);
    const { registry: pending, delivered } = registryOn(state);
    const registry = await pending;
    registry.recover();
    await state.parted!.adopt([ADOPTED]);
    registry.recoverAdopted(inPart(ADOPTED));
    await registry.recovered();

    expect(delivered.sort()).toEqual(["announce:interrupted", "announce:unannounced"]);
    expect(registry.get("interrupted")).toMatchObject({
      state: "announced",
      outcome: "error",
      error: "the gateway restarted while this sub-agent was running",
    });
    expect(registry.get("unannounced")).toMatchObject({ state: "announced", outcome: "success" });
    // A queued run is its replayed spawn turn's; one of another partition is another gateway's.
    expect(registry.get("queued")).toMatchObject({ state: "running", queued: true });
    expect(registry.get("elsewhere")).toBeUndefined();
    expect(data.get("subagents.json")!.get("elsewhere")).toMatchObject({ state: "running" });

    registry.recoverAdopted(inPart(ADOPTED));
    await registry.recovered();
    expect(delivered).toHaveLength(2);
    await registry.close();
  });

  it("never takes a run spawned here for one left behind, when its partition went and came back", async () => {
    const state = partedPort(new Map());
    const { registry: pending, delivered } = registryOn(state);
    const registry = await pending;
    const mine = record("mine", MINE);
    await registry.register(mine, never);
    await state.parted!.evict([MINE]);
    await state.parted!.adopt([MINE]);
    registry.recoverAdopted(inPart(MINE));
    await registry.recovered();
    expect(delivered).toEqual([]);
    expect(registry.get("mine")?.state).toBe("running");
    await registry.close();
  });

  it("starts no announce after stopRecovery: not the rest of a recovery under way, nor a later recoverAdopted", async () => {
    const state = partedPort(storedRecords(record("first", ADOPTED), record("second", ADOPTED)));
    let release: () => void = () => undefined;
    let stepAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (stepAsked = resolve));
    let steps = 0;
    const step = () => {
      steps += 1;
      stepAsked();
      return new Promise<RunRecord>((resolve) => (release = () => resolve(ok)));
    };
    const { registry: pending, delivered } = registryOn(state, step);
    const registry = await pending;
    await state.parted!.adopt([ADOPTED]);
    registry.recoverAdopted(inPart(ADOPTED));
    await asked; // the first run's announce step is running
    registry.stopRecovery();
    release();
    await registry.recovered();
    // The announce under way finishes; the second run's is the next start's (its record still running).
    expect(delivered).toEqual(["announce:first"]);
    expect(registry.get("second")?.state).toBe("running");

    await state.parted!.evict([ADOPTED]);
    await state.parted!.adopt([ADOPTED]);
    registry.recoverAdopted(inPart(ADOPTED));
    await registry.recovered();
    expect(steps).toBe(1);
    expect(registry.get("second")?.state).toBe("running");
    await registry.close();
  });

  it("leaves a run the start's recovery is announcing to it when its partition went and came back meanwhile: one announce", async () => {
    const state = partedPort(storedRecords(record("left", MINE)));
    // The first announce step waits for `release`; any other answers at once.
    let steps = 0;
    let release: () => void = () => undefined;
    let stepAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (stepAsked = resolve));
    const step = () => {
      steps += 1;
      stepAsked();
      return steps > 1 ? Promise.resolve(ok) : new Promise<RunRecord>((resolve) => (release = () => resolve(ok)));
    };
    const { registry: pending, delivered } = registryOn(state, step);
    const registry = await pending;
    registry.recover();
    await asked; // the start's recovery runs the announce step of "left"
    await state.parted!.evict([MINE]);
    await state.parted!.adopt([MINE]);
    registry.recoverAdopted(inPart(MINE));
    release();
    await registry.recovered();
    expect(steps).toBe(1);
    expect(delivered).toEqual(["announce:left"]);
    expect(registry.get("left")).toMatchObject({ state: "announced", outcome: "error" });
    await registry.close();
  });

  it("touches no record of a partition it evicted: no recovery, no stop, not listed", async () => {
    const data = storedRecords(record("gone", ADOPTED));
    const state = partedPort(data);
    const { registry: pending, delivered } = registryOn(state);
    const registry = await pending;
    await state.parted!.adopt([ADOPTED]);
    expect(registry.list("agent:main:main").map((r) => r.runId)).toEqual(["gone"]);
    await state.parted!.evict([ADOPTED]);
    registry.recoverAdopted(inPart(ADOPTED));
    await registry.recovered();
    expect(await registry.stop("agent:main:main")).toBe(0);
    expect(registry.list("agent:main:main")).toEqual([]);
    expect(delivered).toEqual([]);
    expect(data.get("subagents.json")!.get("gone")).toEqual(record("gone", ADOPTED));
    await registry.close();
  });
});
