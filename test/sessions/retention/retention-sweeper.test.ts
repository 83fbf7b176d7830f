import { readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import { createManualClock } from "../../fakes/manual-clock.js";
import { memoryStateAt } from "../../support/memory-state.js";
import { createTestCore } from "../../support/test-core.js";
import { tempHome } from "../../support/test-gateway.js";

const DAY = 86_400_000;

describe("createRetentionSweeper in the gateway", () => {
  it("removes an old hook session on the hourly pass once the clock passes 30 days, and keeps the main session", async () => {
    const clock = createManualClock(Date.parse("2026-03-01T00:00:00Z"));
    const home = await tempHome();
    const core = await createTestCore(parseConfig({}).config, home, {
      now: clock.now,
      timers: clock.timers,
      // The stores in memory; the transcripts, which retention removes, stay in the temporary home.
      state: memoryStateAt(home),
    });
    try {
      const { store, transcripts } = await core.sessions.forAgent("main");
      for (const [key, id] of [
        ["agent:main:hook:h1", "s-hook"],
        ["agent:main:main", "s-main"],
      ] as const) {
        await store.patch(key, () => ({ sessionId: id, updatedAt: clock.now() }));
        await transcripts.append(id, { role: "user", content: "hello" });
      }
      await core.start(() => async () => undefined);
      await core.retention.settled();
      expect(store.get("agent:main:hook:h1")).toBeDefined();

      clock.advance(30 * DAY); // exactly 30 days: still kept
      await core.retention.settled();
      expect(store.get("agent:main:hook:h1")).toBeDefined();

      clock.advance(3_600_000); // the next hourly pass
      await core.retention.settled();
      expect(store.get("agent:main:hook:h1")).toBeUndefined();
      expect(store.get("agent:main:main")).toBeDefined();
      expect((await readdir(path.dirname(store.path))).filter((f) => f.includes("s-hook"))).toEqual([]);
      expect(clock.nextTimerAt()).toBe(clock.now() + 3_600_000);
    } finally {
      await core.stop(0);
    }
    // Stopped: no pass is scheduled any more.
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});
