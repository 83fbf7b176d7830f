// A gateway core in a temporary home for tests that drive the core itself (no HTTP server).
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import { createOfflineModel } from "../../src/agents/models/index.js";
import type { Config } from "../../src/config/index.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import { type GatewayCoreDeps, createGatewayCore } from "../../src/gateway/gateway-core.js";
import { createMemoryLogger } from "../../src/logger.js";

/** A fresh temporary `$SWITCHBOARD_HOME` named `sb-<name>-...`, removed when the test finishes. */
export async function homeForTest(name: string): Promise<string> {
  const home = await mkdtemp(path.join(os.tmpdir(), `sb-${name}-`));
  onTestFinished(() => rm(home, { recursive: true, force: true }));
  return home;
}

/**
 * A gateway core on `config` in `home` (the user's home too), with a memory logger, its own event
 * hub and the offline model; `deps` replace any of them or add the rest (state, clock, adapters).
 */
export function createTestCore(config: Config, home: string, deps: Partial<GatewayCoreDeps> = {}) {
  return createGatewayCore({
    config,
    home,
    homeDir: home,
    logger: createMemoryLogger(),
    events: createEventHub(),
    resolveModel: (ref) => ({ model: createOfflineModel(), ref, offline: true }),
    ...deps,
  });
}
