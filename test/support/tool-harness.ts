// A real gateway core (stores, transcripts, runtime, runs, sub-agent registry) without a server,
// for driving the session tools through `invokeTool` exactly as an agent run or `tools.invoke` does.
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { appendFile, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LanguageModel } from "ai";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import type { GatewayCore, GatewayCoreDeps } from "../../src/gateway/gateway-core.js";
import { createMemoryLogger } from "../../src/logger.js";
import { transcriptRef } from "../../src/sessions/agent-sessions.js";
import type { SessionEntry } from "../../src/sessions/session-entry.js";
import type { TranscriptMessageInput } from "../../src/sessions/transcripts/index.js";
import { isSandboxed } from "../../src/tools/session-access.js";
import { memoryStateAt } from "./memory-state.js";
import type { ToolCaller } from "../../src/tools/tool-definition.js";
import { findTool, invokeTool } from "../../src/tools/tool-registry.js";
import { closedAfterEach } from "./closed-after-each.js";
import { createTestCore } from "./test-core.js";

/** What {@link createToolHarness} takes: a config as written in the file, and the models to run. */
export interface ToolHarnessOptions {
  config?: Record<string, unknown>;
  /** the model for every ref not in `models` (default: the offline model) */
  model?: LanguageModel;
  /** a model per `provider/model` ref, so each agent can have its own script */
  models?: Record<string, LanguageModel>;
  /** the home (and in-memory state) of an earlier harness: a restart of its gateway; default a new temporary one */
  home?: string;
  /** the core's timers (a manual clock's); default Node's */
  timers?: GatewayCoreDeps["timers"];
}

/** A session to create: its key (any spelling), entry fields and transcript messages. */
export interface SeedSession {
  key: string;
  /** the agent whose store holds it; default the key's agent (needed for `global`, which names none) */
  agentId?: string;
  entry?: Partial<SessionEntry>;
  messages?: TranscriptMessageInput[];
}

let seq = 0;

/** Starts a gateway core in a temporary home. Close it with `close()` (afterEach). */
export async function createToolHarness(options: ToolHarnessOptions = {}) {
  const home = options.home ?? (await mkdtemp(path.join(os.tmpdir(), "sb-tools-")));
  const { config } = parseConfig(options.config ?? {});
  const logger = createMemoryLogger();
  const fallback = options.model ?? createOfflineModel();
  const core: GatewayCore = await createTestCore(config, home, {
    logger,
    resolveModel: (ref) => ({ model: options.models?.[ref] ?? fallback, ref, offline: ref.startsWith("offline/") }),
    retry: { minDelayMs: 10, maxDelayMs: 50 },
    // The stores in memory; transcripts and workspaces stay in the temporary home.
    state: memoryStateAt(home),
    ...(options.timers && { timers: options.timers }),
  });

  /** The caller of a tool run in session `key` (sandboxed as the config says), or the owner of `agentId` with no session. */
  function caller(key: string, extra: Partial<ToolCaller> = {}): ToolCaller {
    const { parsed, agentId } = core.parseKey(key);
    return { agentId, sessionKey: parsed, sandboxed: isSandboxed(config, agentId, parsed), ...extra };
  }

  return {
    home,
    config,
    core,
    logger,
    deps: core.toolDeps,
    caller,
    /** The gateway owner acting for `agentId` without naming a session (CLI, `tools.invoke`). */
    owner: (agentId = "main"): ToolCaller => ({ agentId, sandboxed: false }),

    /** Creates a session entry (and its transcript); returns the canonical key, agent and entry. */
    async seed(session: SeedSession): Promise<{ key: string; agentId: string; entry: SessionEntry }> {
      // Parsed leniently, as the store reads keys on disk: a seeded key may be of a shape clients cannot name.
      const parsed = parseSessionKey(session.key, core.toolDeps.keys);
      if (!parsed) throw new Error(`seed: "${session.key}" is not a session key`);
      const agentId = session.agentId ?? ("agentId" in parsed ? parsed.agentId : core.toolDeps.keys.defaultAgentId);
      const { store, transcripts } = await core.sessions.forAgent(agentId);
      seq += 1;
      const entry = (await store.patch(parsed.key, () => ({
        sessionId: `sess-${seq}`,
        updatedAt: 1_000_000 + seq,
        ...session.entry,
      })))!;
      for (const message of session.messages ?? [])
        await transcripts.append(transcriptRef(entry), message, { sessionId: entry.sessionId });
      return { key: parsed.key, agentId, entry };
    },

    /** Appends `count` user messages `m<i>` to a session's transcript in one write (for limits). */
    async appendMany(key: string, count: number, start = 0): Promise<void> {
      const { parsed, agentId } = core.parseKey(key);
      const { store, transcripts } = await core.sessions.forAgent(agentId);
      const entry = store.get(parsed.key)!;
      const file = transcripts.location(transcriptRef(entry));
      await transcripts.append(entry.sessionId, { role: "user", content: `m${start}` }, { sessionId: entry.sessionId });
      const lines = Array.from({ length: count - 1 }, (_, i) =>
        JSON.stringify({ type: "message", message: { role: "user", content: `m${start + i + 1}`, timestamp: i } }),
      );
      await appendFile(file, `${lines.join("\n")}\n`);
    },

    /** Runs a session tool by name the way agent runs do: validation, run, failures as `{status, error}`. */
    async invoke(name: string, args: unknown, who: ToolCaller): Promise<Record<string, any>> {
      const definition = findTool(name);
      if (!definition) throw new Error(`no tool ${name}`);
      return (await invokeTool(definition, args, who, core.toolDeps)) as Record<string, any>;
    },

    /** The entry of `key`, read from its agent's store. */
    async entry(key: string): Promise<SessionEntry | undefined> {
      const { parsed, agentId } = core.parseKey(key);
      return (await core.sessions.forAgent(agentId)).store.get(parsed.key);
    },

    async close(): Promise<void> {
      await core.stop(5_000);
    },
  };
}

/** Returns a `start` function whose harnesses are all closed after each test of the calling file. */
export function useToolHarnesses(): (options?: ToolHarnessOptions) => Promise<ToolHarness> {
  return closedAfterEach(createToolHarness);
}

/** A running tool harness. */
export type ToolHarness = Awaited<ReturnType<typeof createToolHarness>>;
