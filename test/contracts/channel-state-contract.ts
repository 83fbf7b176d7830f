// The contract of the state kept beside the stores on every backend of the state port: the channel
// state an adapter gets at start (src/state/channel-state.ts: rows per channel and namespace, a write
// of many keys one commit), the Telegram offset store and the cron run logs built on it, each read
// back after the port is closed and opened again, as a restart does.
// Runners: test/state/channel-state.contract.test.ts (local files, memory) and
// test/state/postgres-channel-state.contract.test.ts (a real PostgreSQL).
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openOffsetStore } from "../../adapters/telegram/offset-store.js";
import { openCronRunLog } from "../../src/cron/cron-run-log.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openChannelStates } from "../../src/state/channel-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/** A backend of the state port, as the contract needs it. */
export interface ChannelStateSubject {
  /** names the backend in the suite's title */
  name: string;
  /** Opens the port on the state of `dir` (an empty folder per test; opened again to reopen it). */
  open(dir: string): Promise<StatePort>;
}

/** A fresh folder, a port on it, and how to reopen the port (the open one is closed first). */
async function fresh(subject: ChannelStateSubject) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-channel-contract-"));
  let state = await subject.open(dir);
  onTestFinished(async () => {
    await state.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir,
    state: () => state,
    async reopen() {
      await state.close();
      state = await subject.open(dir);
      return state;
    },
  };
}

const channels = (state: StatePort, dir: string) =>
  openChannelStates(state, { file: path.join(dir, "state", "channels.json"), now: () => 1_000 });

/** Run number `i` of job `jobId`, as the scheduler records one. */
export const cronRun = (i: number, jobId = "brief") => ({
  jobId,
  runId: `run-${i}`,
  startedAt: i,
  endedAt: i + 1,
  status: "ok" as const,
  delivered: true,
  delivery: "delivered",
});

const runLog = (state: StatePort, dir: string, maxBytes = 1_000_000) =>
  openCronRunLog({
    state,
    file: path.join(dir, "state", "cron-runs.json"),
    legacyDir: path.join(dir, "cron", "runs"),
    maxBytes,
    logger: createMemoryLogger(),
  });

/** Runs the channel state contract on `subject`. */
export function runChannelStateContract(subject: ChannelStateSubject): void {
  describe(`channel state contract: ${subject.name}`, () => {
    it("keeps each channel's namespaces apart, removes keys and reads everything back after a reopen", async () => {
      const home = await fresh(subject);
      const first = await channels(home.state(), home.dir);
      const a = first.forChannel("telegram").rows("default");
      await a.write({ offset: { lastUpdateId: 5 }, "key/with:odd chars": [1, "two"] });
      await first
        .forChannel("telegram")
        .rows("other")
        .write({ offset: { lastUpdateId: 9 } });
      await first
        .forChannel("whatsapp")
        .rows("default")
        .write({ creds: { me: "x" } });
      await a.write({ "key/with:odd chars": null });
      await first.close();
      const again = await channels(await home.reopen(), home.dir);
      const rows = again.forChannel("telegram").rows("default");
      expect(rows.keys()).toEqual(["offset"]);
      expect(rows.get("offset")).toEqual({ lastUpdateId: 5 });
      expect(rows.savedAt("offset")).toBe(1_000);
      expect(again.forChannel("telegram").rows("other").get("offset")).toEqual({ lastUpdateId: 9 });
      expect(again.forChannel("whatsapp").rows("default").keys()).toEqual(["creds"]);
      expect(again.forChannel("whatsapp").rows("other").keys()).toEqual([]);
    });

    it("stores a write of 2,000 keys and removals as one commit, every key there after a reopen", async () => {
      const home = await fresh(subject);
      const rows = (await channels(home.state(), home.dir)).forChannel("whatsapp").rows("default");
      const batch: Record<string, unknown> = {};
      for (let i = 0; i < 2_000; i++) batch[`pre-key-${i}`] = { public: `p${i}`, private: `s${i}` };
      await rows.write(batch);
      await rows.write({ "pre-key-0": null, "pre-key-1": null, "session-a": { n: 1 } });
      const again = (await channels(await home.reopen(), home.dir)).forChannel("whatsapp").rows("default");
      expect(again.keys().length).toBe(1_999);
      expect(again.get("pre-key-1999")).toEqual({ public: "p1999", private: "s1999" });
      expect(again.get("pre-key-0")).toBeUndefined();
    });

    it("resumes Telegram polling after the stored offset, and not from another bot's", async () => {
      const home = await fresh(subject);
      const logger = createMemoryLogger();
      const options = { logger, legacyFile: path.join(home.dir, "none.json"), readOnly: false };
      const rows = (await channels(home.state(), home.dir)).forChannel("telegram").rows("default");
      const offsets = await openOffsetStore(rows, options);
      expect(await offsets.read(42)).toBeUndefined();
      await offsets.write(42, 100);
      await offsets.write(42, 101);
      const again = (await channels(await home.reopen(), home.dir)).forChannel("telegram").rows("default");
      const reopened = await openOffsetStore(again, options);
      expect(await reopened.read(42)).toBe(101);
      expect(await reopened.read(43)).toBeUndefined();
    });

    it("keeps cron run logs per job, newest first, capped by dropping the oldest, after a reopen", async () => {
      const home = await fresh(subject);
      const log = await runLog(home.state(), home.dir, 10_000);
      for (let i = 0; i < 300; i++) await log.append(cronRun(i));
      await log.append(cronRun(1, "other"));
      const again = await runLog(await home.reopen(), home.dir, 10_000);
      const runs = await again.read("brief", 500);
      expect(runs[0]!.runId).toBe("run-299");
      expect(runs.length).toBeGreaterThan(20);
      expect(runs.length).toBeLessThan(300);
      expect(runs.reduce((sum, r) => sum + JSON.stringify(r).length + 1, 0)).toBeLessThanOrEqual(10_000);
      expect(runs.map((r) => r.startedAt)).toEqual([...runs.map((r) => r.startedAt)].sort((a, b) => b - a));
      expect((await again.read("brief", 3)).map((r) => r.runId)).toEqual(["run-299", "run-298", "run-297"]);
      expect((await again.read("other")).map((r) => r.runId)).toEqual(["run-1"]);
      expect(await again.read("never-ran")).toEqual([]);
    });
  });
}
