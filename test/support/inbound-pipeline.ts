// The inbound pipeline on in-memory stores in a temporary folder, with a scripted model and a
// recording deliver: what tests of the pipeline and its durable inbox drive.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import { createAgentRuntime } from "../../src/agents/agent-runtime.js";
import { createLanes } from "../../src/agents/lanes.js";
import { createRunRegistry } from "../../src/agents/run-registry.js";
import type { CommandDispatcher } from "../../src/commands/command-dispatcher.js";
import { parseConfig } from "../../src/config/index.js";
import { createInboundPipeline } from "../../src/inbound/handle-inbound.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { createAgentSessionsPool } from "../../src/sessions/agent-sessions.js";
import type { StatePort } from "../../src/state/state-port.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";
import { type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { memoryStateAt, onMemoryState } from "./memory-state.js";

/** A dispatcher with one command: "/ping" answers "pong". */
const ping: CommandDispatcher = {
  dispatch: async ({ message }) => (message.text.trim() === "/ping" ? { reply: "pong" } : null),
};

const TELEGRAM = { allowFrom: ["42", "43"], groupAllowFrom: ["42"] };

/** How {@link setupPipeline} differs from its defaults. */
export interface SetupOptions {
  telegram?: Record<string, unknown>;
  session?: Record<string, unknown>;
  /** reuse a state folder, as a restarted gateway does */
  dir?: string;
  handedOver?: (key: string) => boolean;
  commands?: CommandDispatcher;
  /** the inbox's port (one opened for some partitions); default: the folder's in-memory port */
  inboxState?: StatePort;
}

/** A pipeline whose model answers with `steps`, on the stores of a temporary folder (or `options.dir`). */
export async function setupPipeline(steps: ScriptedStep[], options: SetupOptions = {}) {
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), "sb-inbound-")));
  if (!options.dir) onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const { config } = parseConfig({
    channels: { telegram: options.telegram ?? TELEGRAM },
    ...(options.session && { session: options.session }),
  });
  const logger = createMemoryLogger();
  const clock = createManualClock();
  const model = createScriptedModel(steps);
  const storePathFor = (agentId: string) => path.join(dir, "agents", agentId, "sessions", "sessions.json");
  const sessions = createAgentSessionsPool(
    onMemoryState({ session: config.session, logger, now: clock.now, storePathFor }, dir),
  );
  const { delivered, deliver } = recordingDeliver();
  const runtime = createAgentRuntime({
    ...{ config, sessions, logger, deliver, now: clock.now, lanes: createLanes(), runs: createRunRegistry() },
    resolveModel: (ref) => ({ model, ref, offline: false }),
  });
  const state = options.inboxState ?? memoryStateAt(dir);
  const inbox = await createInbox({ state, path: path.join(dir, "state", "inbox.json"), logger, now: clock.now });
  const pipeline = createInboundPipeline({
    ...{ config, sessions, runtime, inbox, deliver, logger },
    commands: options.commands ?? ping,
    ...(options.handedOver && { handedOver: options.handedOver }),
  });
  const { store, transcripts } = await sessions.forAgent("main");
  return { pipeline, model, delivered, store, transcripts, clock, logger, inbox, dir };
}
