import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createOfflineModel } from "../../../src/agents/models/index.js";
import { parseConfig, resolvePaths } from "../../../src/config/index.js";
import { createEventHub } from "../../../src/gateway/event-hub.js";
import { createGatewayCore } from "../../../src/gateway/gateway-core.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { localHomeTables, localTablePath } from "../../../src/migrate/home-tables.js";
import { openLocalState } from "../../../src/state/local-state.js";
import type { StatePort } from "../../../src/state/state-port.js";

/** A local port that records each table the gateway opens, with the path it gives. */
function recordingPort(opened: Map<string, string>, dir: string): StatePort {
  const inner = openLocalState({ dir, logger: createMemoryLogger() });
  return {
    readOnly: false,
    async table(spec) {
      opened.set(spec.name, spec.path);
      return inner.table(spec);
    },
    commit: (fn) => inner.commit(fn),
    flush: () => inner.flush(),
    close: () => inner.close(),
  };
}

describe("the migrator's list of a home's tables", () => {
  it("names every table a gateway opens, at the path the gateway keeps it (a new store not listed fails here)", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-home-tables-"));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const { config } = parseConfig({ agents: { list: [{ id: "main" }, { id: "work" }] } });
    const opened = new Map<string, string>();
    const core = await createGatewayCore({
      config,
      home,
      homeDir: home,
      logger: createMemoryLogger(),
      events: createEventHub(),
      resolveModel: (ref) => ({ model: createOfflineModel(), ref, offline: true }),
      state: recordingPort(opened, path.join(home, "state")),
    });
    await core.sessions.forAgent("main");
    await core.sessions.forAgent("work");
    await core.stop(0);
    const layout = {
      config,
      paths: resolvePaths({ homeDir: home, cwd: home, env: { SWITCHBOARD_HOME: home } }),
      homeDir: home,
    };
    expect([...opened.keys()].sort()).toEqual((await localHomeTables(layout)).sort());
    for (const [name, file] of opened) expect(path.resolve(file), name).toBe(localTablePath(layout, name));
  });
});
