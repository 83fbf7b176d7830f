import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import { createGatewayCore } from "../../src/gateway/gateway-core.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/** A local port that records which tables were opened and closed on it, and when it was closed. */
function recordingPort(events: string[], dir: string): StatePort {
  const inner = openLocalState({ dir, logger: createMemoryLogger() });
  return {
    readOnly: false,
    async table(spec) {
      const table = await inner.table(spec);
      events.push(`open ${spec.name}`);
      return Object.assign(Object.create(table), {
        async close() {
          events.push(`close ${spec.name}`);
          await table.close();
        },
      });
    },
    commit: (fn) => inner.commit(fn),
    flush: () => inner.flush(),
    async close() {
      events.push("close port");
      await inner.close();
    },
  };
}

describe("the gateway's state", () => {
  it("keeps every store in the one port it was given, and closes the port after the stores", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-gateway-state-"));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const events: string[] = [];
    const { config } = parseConfig({ agents: { list: [{ id: "main" }, { id: "work" }] } });
    const core = await createGatewayCore({
      config,
      home,
      homeDir: home,
      logger: createMemoryLogger(),
      events: createEventHub(),
      resolveModel: (ref) => ({ model: createOfflineModel(), ref, offline: true }),
      state: recordingPort(events, path.join(home, "state")),
    });
    await core.sessions.forAgent("main");
    await core.sessions.forAgent("work");
    const tables = [
      "outbox",
      "subagents",
      "inbox",
      "pairing",
      "tool-calls",
      "cron-jobs",
      "cron-runs",
      "channels",
      "sessions:main",
      "sessions:work",
    ];
    expect(events.filter((e) => e.startsWith("open ")).sort()).toEqual(tables.map((t) => `open ${t}`).sort());

    await core.stop(0);
    expect(events.at(-1)).toBe("close port");
    expect(events.filter((e) => e.startsWith("close ") && e !== "close port").sort()).toEqual(
      tables.map((t) => `close ${t}`).sort(),
    );
  });
});
