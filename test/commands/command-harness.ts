// The command dispatcher over real stores, transcripts, lanes, runs and agent runtime in a temp
// dir, with a scripted model, a fake sub-agent control and a list of outbox items
// (failed and pending).
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { tool } from "ai";
import { onTestFinished } from "vitest";
import { z } from "zod";
import { createAgentRuntime } from "../../src/agents/agent-runtime.js";
import { createLanes } from "../../src/agents/lanes.js";
import { type ResolvedModel, buildModelCatalog } from "../../src/agents/models/index.js";
import { createRunRegistry } from "../../src/agents/run-registry.js";
import type { CommandDeps, SubagentInfo } from "../../src/commands/command-deps.js";
import type { PairingControl } from "../../src/commands/pairing-control.js";
import type { CommandContext, CommandSender } from "../../src/commands/command-context.js";
import { createCommandDispatcher } from "../../src/commands/command-dispatcher.js";
import { TEST_CAPABILITIES } from "../fakes/capabilities.js";
import { parseConfig } from "../../src/config/index.js";
import type { OutboxItem } from "../../src/delivery/outbox-item.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema, routeInputFromInbound } from "../../src/routing/inbound-message.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { resolveAgentRoute } from "../../src/routing/resolve-route.js";
import { createAgentSessionsPool, transcriptRef } from "../../src/sessions/agent-sessions.js";
import type { SessionEntry } from "../../src/sessions/session-entry.js";
import type { TranscriptMessageInput } from "../../src/sessions/transcripts/index.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { createFakeSubagentControl } from "./fake-subagent-control.js";
import { onMemoryState } from "../support/memory-state.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";

/** Who may do what: the three tiers the inbound access check hands the dispatcher. */
export const OWNER: CommandSender = { talk: true, commands: true, owner: true };
/** a command user who may also talk (listed in commandAllowFrom and allowFrom) */
export const COMMAND_USER: CommandSender = { talk: true, commands: true, owner: false };
/** a command user who may not talk (commandAllowFrom only) */
export const COMMAND_ONLY: CommandSender = { talk: false, commands: true, owner: false };
export const TALKER: CommandSender = { talk: true, commands: false, owner: false };
/** one of the gateway's own clients (terminal, web UI): what access decides for them */
export const GATEWAY_CLIENT: CommandSender = { talk: true, commands: true, owner: true, gatewayClient: true };

/** What {@link createCommandHarness} takes. */
export interface CommandHarnessOptions {
  config?: Record<string, unknown>;
  steps?: ScriptedStep[];
  /** the session model counts as the offline one (default false: the scripted model summarizes) */
  offline?: boolean;
  /** sub-agents of `subagentsOf` (default the owner's Telegram DM session) */
  subagents?: SubagentInfo[];
  subagentsOf?: string;
  stopCount?: number;
  /** replaces building the session's model (a test makes it throw) */
  resolveModel?: (ref: string) => ResolvedModel;
  /** pairing codes for `/pair`, built on the harness's clock (default: none) */
  pairing?: (now: () => number) => Promise<PairingControl>;
  /** how each channel account's connection is doing, for `/status` (default: unknown) */
  accountHealth?: CommandDeps["accountHealth"];
}

/** A Telegram DM from `sender`. */
export const dm = (sender: string, text: string, fields: Record<string, unknown> = {}) => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender },
  text,
  ...fields,
});
/** A Telegram group message from `sender` in group -100. */
export const inGroup = (sender: string, text: string, fields: Record<string, unknown> = {}) => ({
  channel: "telegram",
  chat: { type: "group", id: "-100" },
  sender: { id: sender },
  text,
  ...fields,
});
/** A terminal-chat message (a gateway client: the owner). */
export const terminal = (text: string) => ({
  channel: "webchat",
  chat: { type: "direct", id: "agent:main:main" },
  sender: { id: "cli" },
  text,
});

/** Creates the harness; its temp dir goes when the test ends. */
export async function createCommandHarness(options: CommandHarnessOptions = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-commands-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  // Per-sender DM sessions unless a test says otherwise: most commands act on "the sender's own DM".
  const raw = options.config ?? {};
  const { config } = parseConfig({
    ...raw,
    session: { dmScope: "per-channel-peer", ...(raw.session as object | undefined) },
  });
  const clock = createManualClock();
  const logger = createMemoryLogger();
  const sessions = createAgentSessionsPool(
    onMemoryState(
      {
        session: config.session,
        logger,
        now: clock.now,
        catalog: buildModelCatalog(config),
        storePathFor: (agentId: string) => path.join(dir, "agents", agentId, "sessions", "sessions.json"),
      },
      dir,
    ),
  );
  const model = createScriptedModel(options.steps ?? []);
  const resolveModel =
    options.resolveModel ?? ((ref: string): ResolvedModel => ({ model, ref, offline: options.offline ?? false }));
  const lanes = createLanes();
  const runs = createRunRegistry({ now: clock.now });
  const { delivered, deliver } = recordingDeliver();
  const runtime = createAgentRuntime({
    config,
    sessions,
    lanes,
    runs,
    logger,
    now: clock.now,
    resolveModel,
    deliver,
  });
  const failures: OutboxItem[] = [];
  const subagents = createFakeSubagentControl(options.subagentsOf ?? "agent:main:telegram:dm:42", options.subagents, {
    ...(options.stopCount !== undefined && { stopCount: options.stopCount }),
  });
  const tools = () => ({
    sessions_list: tool({
      description: "List the sessions you can see.",
      inputSchema: z.object({}),
      execute: async () => ({}),
    }),
  });
  const dispatcher = createCommandDispatcher({
    config,
    sessions,
    runtime,
    lanes,
    runs,
    logger,
    now: clock.now,
    resolveModel,
    subagents,
    tools,
    gate: {
      failures: (key?: string) =>
        failures.filter((f) => f.status === "failed" && (key === undefined || f.sessionKey === key)),
      pendingItems: (key?: string) =>
        failures.filter((f) => f.status === "pending" && (key === undefined || f.sessionKey === key)),
    },
    capabilitiesOf: TEST_CAPABILITIES,
    ...(options.pairing && { pairing: await options.pairing(clock.now) }),
    ...(options.accountHealth && { accountHealth: options.accountHealth }),
  });
  const { store, transcripts } = await sessions.forAgent("main");

  /** The context the inbound pipeline would hand the dispatcher for `raw` from `sender` (routed, or on `sessionKey`). */
  function context(raw: Record<string, unknown>, sender: CommandSender = OWNER, sessionKey?: string): CommandContext {
    const message = InboundMessageSchema.parse(raw);
    const route = resolveAgentRoute(config, routeInputFromInbound(message));
    const parsed =
      sessionKey === undefined ? route.parsed : parseSessionKey(sessionKey, { mainKey: config.session.mainKey })!;
    return { message, sessionKey: parsed, agentId: route.agentId, sender };
  }

  return {
    config,
    clock,
    logger,
    sessions,
    store,
    transcripts,
    model,
    lanes,
    runs,
    runtime,
    delivered,
    failures,
    subagents,
    dispatcher,
    context,
    dispatch: (raw: Record<string, unknown>, sender: CommandSender = OWNER) =>
      dispatcher.dispatch(context(raw, sender)),

    /** Creates `key`'s entry (and transcript) as a turn would have. */
    async seed(
      key: string,
      entry: Partial<SessionEntry> = {},
      messages: TranscriptMessageInput[] = [],
    ): Promise<SessionEntry> {
      const created = (await store.patch(key, () => ({
        sessionId: `sess-${path.basename(dir)}`,
        createdAt: clock.now(),
        updatedAt: clock.now(),
        ...entry,
      })))!;
      for (const message of messages)
        await transcripts.append(transcriptRef(created), message, { sessionId: created.sessionId });
      return created;
    },

    /** The whole transcript of `key`, oldest first. */
    async transcript(key: string) {
      const entry = store.get(key);
      return entry
        ? (await transcripts.readTail(transcriptRef(entry), { limit: 1000, includeTools: true })).messages
        : [];
    },
  };
}
