import { describe, expect, it } from "vitest";
import type { AgentRuntime } from "../../src/agents/agent-runtime.js";
import type { RunRecord } from "../../src/agents/run-registry.js";
import { createMemoryLogger } from "../../src/logger.js";
import type { AgentSessionsPool } from "../../src/sessions/agent-sessions.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { StatePort } from "../../src/state/state-port.js";
import { createSubagentRegistry } from "../../src/tools/subagent-registry.js";
import type { AnnounceHandOver, SubagentRegistryDeps } from "../../src/tools/subagent-record.js";
import { type ManualClock, createManualClock } from "../fakes/manual-clock.js";

/** A registry on the stored tables `data`; by default no runtime (a spawn's announce never comes: its run never ends). */
function registryOn(data: MemoryStateData, deps: Partial<SubagentRegistryDeps> = {}) {
  return createSubagentRegistry({
    state: openMemoryState({ data }),
    path: "subagents.json",
    sessions: {} as AgentSessionsPool,
    runtime: () => {
      throw new Error("no runtime in this test");
    },
    handOver: async () => {
      throw new Error("no announce in this test");
    },
    stopChild: async () => {
      throw new Error("no stop in this test");
    },
    handedOver: () => false,
    archiveAfterMinutes: 60,
    logger: createMemoryLogger(),
    now: () => 1_000,
    ...deps,
  });
}

/** A port on `data` whose writes fail while `outage.down` is set, as when the database is away. */
function flakyState(data: MemoryStateData, outage: { down: boolean }): StatePort {
  return watchedState(data, {
    before: async () => {
      if (outage.down) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
    },
  });
}

/** A port on `data` that runs `before` ahead of each write and `after` once it is stored (the writer waits for both). */
function watchedState(data: MemoryStateData, hooks: { before?: WriteHook; after?: WriteHook }): StatePort {
  const port = openMemoryState({ data });
  return {
    readOnly: false,
    commit: (fn) => port.commit(fn),
    flush: () => port.flush(),
    close: () => port.close(),
    async table(spec) {
      const table = await port.table(spec);
      const set = table.set.bind(table);
      table.set = async (key, value) => {
        await hooks.before?.(key, value);
        await set(key, value);
        await hooks.after?.(key, value);
      };
      return table;
    },
  };
}
type WriteHook = (key: string, value: unknown) => Promise<void>;

/**
 * What a working announce needs: a child that answers its announce step, and a hand-over that keeps
 * what it was handed (failing the next `failures[runId]` times for that run).
 */
function announcing(failures: Record<string, number> = {}) {
  const delivered: string[] = [];
  const deps = {
    runtime: () =>
      ({
        enqueue: () => ({ done: Promise.resolve({ status: "ok", text: "Result: found X" }) }),
      }) as unknown as AgentRuntime,
    sessions: { forAgent: async () => ({ store: { get: () => undefined } }) } as unknown as AgentSessionsPool,
    handOver: async (announce: AnnounceHandOver): Promise<void> => {
      const runId = announce.id.replace("announce:", "");
      if ((failures[runId] ?? 0) > 0) {
        failures[runId]! -= 1;
        throw new Error("inbox write failed");
      }
      delivered.push(announce.id);
    },
    handedOver: (key: string) => delivered.includes(key),
  };
  return { delivered, deps };
}

/** The clock's timers, telling the test each backoff the recovery waits for. */
function watchedTimers(clock: ManualClock) {
  const asked: number[] = [];
  let told: ((ms: number) => void) | undefined;
  const timers = {
    setTimeout(callback: () => void, ms: number) {
      if (told) told(ms);
      else asked.push(ms);
      told = undefined;
      return clock.timers.setTimeout(callback, ms);
    },
    clearTimeout: (handle: unknown) => clock.timers.clearTimeout(handle),
  };
  /** The next backoff's length, once the recovery has asked for it. */
  const next = () =>
    asked.length > 0 ? Promise.resolve(asked.shift()!) : new Promise<number>((resolve) => (told = resolve));
  return { timers, next };
}

/** A spawned run whose end never comes (it is still running). */
const spawn = (runId: string) => ({
  runId,
  childSessionKey: `agent:worker:subagent:${runId}`,
  childAgentId: "worker",
  requesterKey: "agent:main:main",
  origin: { channel: "telegram", to: "42" },
  task: "research X",
  cleanup: "keep" as const,
});
const never = new Promise<RunRecord>(() => undefined);

/** Stored tables holding `runIds` as runs a dead gateway left running. */
async function leftRunning(...runIds: string[]): Promise<MemoryStateData> {
  const data: MemoryStateData = new Map();
  const before = await registryOn(data);
  for (const runId of runIds) await before.register(spawn(runId), never);
  await before.close();
  return data;
}

/** A registry recovering `runIds` while the database is away (until `outage.down` is cleared), on a manual clock. */
async function recoveringInOutage(runIds: string[], failures: Record<string, number> = {}) {
  const data = await leftRunning(...runIds);
  const outage = { down: true };
  const clock = createManualClock();
  const backoff = watchedTimers(clock);
  const logger = createMemoryLogger();
  const { delivered, deps } = announcing(failures);
  const state = flakyState(data, outage);
  const registry = await registryOn(data, { ...deps, state, timers: backoff.timers, logger });
  registry.recover();
  return { registry, outage, clock, backoff, logger, delivered, data, deps };
}

const retries = (logger: ReturnType<typeof createMemoryLogger>) =>
  logger.records.filter((r) => r.message === "sub-agent recovery failed; retrying").map((r) => r.fields);

describe("createSubagentRegistry", () => {
  it("recovers only the runs stored when it opened: one spawned since, still running, is not taken for an orphan", async () => {
    const data = await leftRunning("left-behind");
    const { delivered, deps } = announcing();
    const registry = await registryOn(data, deps);
    await registry.register(spawn("spawned-since"), never);
    registry.recover();
    await registry.recovered();
    expect(delivered).toEqual(["announce:left-behind"]);
    expect(registry.get("left-behind")).toMatchObject({
      state: "announced",
      outcome: "error",
      error: "the gateway restarted while this sub-agent was running",
    });
    expect(registry.get("spawned-since")?.state).toBe("running");
    await registry.close();
  });

  it("leaves a run still queued (its child never started) to its spawn turn's replay: not announced as interrupted", async () => {
    const data: MemoryStateData = new Map();
    const before = await registryOn(data);
    await before.register({ ...spawn("queued"), queued: true }, never);
    await before.register(spawn("started"), never);
    await before.close();
    const { delivered, deps } = announcing();
    const registry = await registryOn(data, deps);
    registry.recover();
    await registry.recovered();
    expect(delivered).toEqual(["announce:started"]);
    expect(registry.get("queued")).toMatchObject({ state: "running", queued: true });
    await registry.close();
  });

  it("records a run whose stop was asked as stopped at a restart, started or queued, and announces neither", async () => {
    const data: MemoryStateData = new Map();
    const before = await registryOn(data);
    await before.register({ ...spawn("started"), stopAskedAt: 500 }, never);
    await before.register({ ...spawn("queued"), queued: true, stopAskedAt: 500 }, never);
    await before.close();
    const { delivered, deps } = announcing();
    const registry = await registryOn(data, deps);
    registry.recover();
    await registry.recovered();
    expect(delivered).toEqual([]);
    for (const runId of ["started", "queued"])
      expect(registry.get(runId)).toMatchObject({ state: "announced", outcome: "stopped", endedAt: 500 });
    expect(registry.get("queued")?.queued).toBeUndefined();
    await registry.close();
  });

  it("retries a failed recovery with backoff: it fails twice, then announces each interrupted run exactly once", async () => {
    // The first attempt finds the database away; the second announces "a" but fails to hand over "b".
    const { registry, outage, clock, backoff, logger, delivered } = await recoveringInOutage(["a", "b"], { b: 1 });

    const first = await backoff.next();
    expect(delivered).toEqual([]);
    outage.down = false;
    clock.advance(first);
    const second = await backoff.next();
    expect(delivered).toEqual(["announce:a"]);
    clock.advance(second);
    await registry.recovered();

    expect(delivered).toEqual(["announce:a", "announce:b"]);
    expect(registry.get("a")?.state).toBe("announced");
    expect(registry.get("b")?.state).toBe("announced");
    // 1 s, then 2 s, each jittered in its upper half.
    expect(retries(logger)).toMatchObject([{ attempt: 1 }, { attempt: 2 }]);
    expect(first).toBeGreaterThanOrEqual(500);
    expect(first).toBeLessThanOrEqual(1_000);
    expect(second).toBeGreaterThanOrEqual(1_000);
    expect(second).toBeLessThanOrEqual(2_000);
    expect(clock.nextTimerAt()).toBeUndefined();
    await registry.close();
  });

  it("ends the retry when a stop begins during its backoff; the next start announces the run once", async () => {
    const { registry, outage, clock, backoff, logger, delivered, data, deps } = await recoveringInOutage(["a"]);
    await backoff.next();

    registry.stopRecovery();
    await registry.recovered();
    expect(clock.nextTimerAt()).toBeUndefined();
    outage.down = false;
    clock.advance(3_600_000);
    expect(delivered).toEqual([]);
    expect(retries(logger)).toHaveLength(1);
    expect(registry.get("a")?.state).toBe("running");
    await registry.close();

    const next = await registryOn(data, deps);
    next.recover();
    await next.recovered();
    expect(delivered).toEqual(["announce:a"]);
    await next.close();
  });

  it("keeps a child's end when it ended while /stop was writing its sibling's stop", async () => {
    const data: MemoryStateData = new Map();
    let endB: (run: RunRecord) => void = () => undefined;
    const bDone = new Promise<RunRecord>((resolve) => (endB = resolve));
    let bEnded: Promise<void> = Promise.resolve();
    // b ends (and is announced) right after a's stop is stored, while /stop is still going through the records.
    const state = watchedState(data, {
      after: async (key, value) => {
        if (key !== "a" || (value as { stopAskedAt?: number }).stopAskedAt === undefined) return;
        endB({ runId: "b", sessionKey: "x", status: "ok", text: "done", queuedAt: 1 });
        await bEnded;
      },
    });
    const { delivered, deps } = announcing();
    const registry = await registryOn(data, { ...deps, stopChild: async () => undefined, state });
    await registry.register(spawn("a"), never);
    bEnded = (await registry.register(spawn("b"), bDone)).ended;

    expect(await registry.stop("agent:main:main")).toBe(1);
    expect(delivered).toEqual(["announce:b"]);
    expect(registry.get("b")).toMatchObject({ state: "announced" });
    expect(registry.get("b")?.stopAskedAt).toBeUndefined();
    expect(registry.get("a")).toMatchObject({ state: "running", stopAskedAt: 1_000 });
    await registry.close();
  });
});

describe("the stop cascade", () => {
  it("stores the stop of each running child after its record holds the stop, its own children first, and none for a run that ended", async () => {
    const data: MemoryStateData = new Map();
    const stops: Array<{ runId: string; asked: number | undefined }> = [];
    let registry: Awaited<ReturnType<typeof registryOn>> | undefined;
    // What the record on the table says when its stop is handed to the child's inbox.
    const stopChild = async (record: { runId: string }) => {
      stops.push({ runId: record.runId, asked: registry!.get(record.runId)?.stopAskedAt });
    };
    const { deps } = announcing();
    registry = await registryOn(data, { ...deps, stopChild });
    await registry.register(spawn("a"), never);
    const grandchild = { ...spawn("a1"), requesterKey: spawn("a").childSessionKey };
    await registry.register(grandchild, never);
    const bDone = Promise.resolve<RunRecord>({ runId: "b", sessionKey: "x", status: "ok", text: "done", queuedAt: 1 });
    await (await registry.register(spawn("b"), bDone)).ended;

    expect(await registry.stop("agent:main:main")).toBe(2);
    expect(stops).toEqual([
      { runId: "a1", asked: 1_000 },
      { runId: "a", asked: 1_000 },
    ]);
    expect(registry.get("b")).toMatchObject({ state: "announced" });
    await registry.close();
  });
});
