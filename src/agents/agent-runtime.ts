import { randomUUID } from "node:crypto";
import type { ToolSet } from "ai";
import type { Config } from "../config/schema/index.js";
import { chatErrorText, logError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { DeliveryContext, SessionEntry } from "../sessions/session-entry.js";
import { BARE_RESET_PROMPT, type SessionReset, type TurnStart } from "../sessions/session-lifecycle.js";
import { type AgentSessionsPool, type OpenedAgentSessions, transcriptRef } from "../sessions/agent-sessions.js";
import { type Provenance, type TranscriptMessage, isCommandMessage } from "../sessions/transcripts/index.js";
import { type CapabilitiesOf, servesGatewayClients, showsTyping } from "../delivery/capabilities-of.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { RunEnd } from "./run-end.js";
import { sinceLastCompaction } from "./compaction-marker.js";
import type { Lanes } from "./lanes.js";
import { createSlots } from "./slots.js";
import type { ResolvedModel } from "./models/index.js";
import { asModelError } from "./models/model-error.js";
import type { RunRecord, RunRegistry } from "./run-registry.js";
import { runAgentTurn } from "./run-agent-turn.js";
import { autoCompact } from "./compaction/auto-compact.js";
import { COMPACTION_STRINGS } from "./compaction/compaction-strings.js";
import { thinkingOptions } from "./models/thinking-options.js";
import { joinPromptParts } from "./system-prompt.js";
import { toolCallSummary } from "./tool-call-summary.js";
import { markWithheld } from "./withheld-reply.js";
import { turnPromptParts } from "./turn-prompt.js";
import { isWritable } from "./workspace/ensure-workspace.js";
import { createPromptFileReader } from "./workspace/prompt-files.js";

/** One turn to run on a session. */
export interface TurnRequest {
  /** the idempotency key; default a new UUID */
  runId?: string;
  parsed: ParsedSessionKey;
  agentId: string;
  /** a channel message: its metadata is recorded and it may carry a reset trigger */
  message?: InboundMessage;
  /** the text for the agent when there is no message (gateway `agent`, sessions_send) */
  prompt?: string;
  /** a new session first: an authorized `/new` or `/reset`, applied when the turn starts */
  reset?: SessionReset;
  /** where the reply goes; default the message's chat; false keeps it internal */
  deliver?: DeliveryContext | false;
  /** where the turn's input came from (another session, a channel), recorded in the transcript */
  provenance?: Provenance;
  extraSystemPrompt?: string;
  timeoutMs?: number;
  /** an owner (or a gateway client) triggered this turn; default false: its session tools reach only what it spawned */
  owner?: boolean;
  /** a replay after a restart: what the interrupted attempt wrote under this run id is not sent to the model again */
  resumed?: boolean;
  /** an isolated cron or hook run: a new sessionId for this turn, carrying what a new session keeps (docs/sessions.md) */
  isolated?: boolean;
  /** `provider/model` for this turn only (cron jobs, hooks); default the session's model */
  model?: string;
  /** awaited right before the turn runs (after its lane and slot): a replay counts its start on disk */
  onStart?: () => Promise<void>;
}

/** What a run's tools know about the run: its session, the chat it serves, its agent-to-agent trace. */
export interface ToolContext {
  agentId: string;
  sessionKey: ParsedSessionKey;
  runId: string;
  /** the chat this turn came from (where a spawned sub-agent announces) */
  origin?: DeliveryContext;
  trace?: { traceId: string; hop: number };
  /** whether an owner triggered the turn (its tools act with that authority); default false */
  owner?: boolean;
}

/** A run event for gateway clients. */
export interface RuntimeEvent {
  type: "chat";
  sessionKey: string;
  runId: string;
  state: "final" | "error" | "aborted";
  text?: string;
  error?: string;
}

/** Dependencies of {@link createAgentRuntime}. */
export interface AgentRuntimeDeps {
  config: Config;
  sessions: AgentSessionsPool;
  lanes: Lanes;
  runs: RunRegistry;
  resolveModel: (ref: string) => ResolvedModel;
  deliver: Deliver;
  /** the tools a run on `sessionKey` may use */
  /** the tools of a turn; may wait a moment (MCP servers still in their first connect) */
  tools?: (context: ToolContext) => ToolSet | Promise<ToolSet>;
  logger: Logger;
  onEvent?: (event: RuntimeEvent) => void;
  /** the workspace of an agent (prompt files, memory flush); default none */
  workspaceOf?: (agentId: string) => string | undefined;
  /** starts the target chat's typing indicator for the length of a run; returns its stop */
  typing?: (target: DeliveryContext) => () => void;
  /** what each channel's adapter declared (typing, gateway clients); default: every channel is a platform chat */
  capabilitiesOf?: CapabilitiesOf;
  /** turns answering channel messages that run at once, across sessions; default {@link CHAT_TURNS_AT_ONCE} */
  chatTurnsAtOnce?: number;
  now?: () => number;
}

const HISTORY_LIMIT = 200;

/**
 * Turns answering channel messages that run at once (from the start of the turn to its reply's
 * delivery); the next one waits at the head of its session's lane. A flood of chats (a backlog
 * after an outage, a bench's 10,000 sessions) then runs a few hundred turns deep instead of all at
 * once: each turn's garbage dies young and its transcript file stays open between its two appends
 * (256 kept open). Turns started by tools, cron, hooks and gateway clients take no slot, and a
 * chat turn gives its slot back while it waits for another session's turn ({@link waitOutsideSlot}:
 * that turn may be queued behind a chat turn waiting for a slot).
 */
const CHAT_TURNS_AT_ONCE = 256;

/** The model a session runs: its `/new <model>` override, else the agent's, else the default. */
export function sessionModelRef(config: Config, agentId: string, entry: SessionEntry | undefined): string {
  if (entry?.providerOverride && entry.modelOverride) return `${entry.providerOverride}/${entry.modelOverride}`;
  return config.agents.list.find((agent) => agent.id === agentId)?.model ?? config.agents.defaults.model;
}

/**
 * Runs agent turns on sessions: one lane per session (a message that arrives during a run waits),
 * the transcript as context, token usage on the entry, and the reply through the delivery gate.
 */
export function createAgentRuntime(deps: AgentRuntimeDeps) {
  const { config, logger, runs } = deps;
  const chatSlots = createSlots(deps.chatTurnsAtOnce ?? CHAT_TURNS_AT_ONCE);
  // The chat slot each running chat turn holds (by run id), for {@link waitOutsideSlot}.
  const holders = new Map<string, { release: () => void; waits: number; signal: AbortSignal }>();
  // Workspace files are kept between turns and read again only when a stat shows a change.
  const readFiles = createPromptFileReader();

  /** The turn's model, tools, system prompt and context; the session is compacted first when its context grew too big. */
  async function prepare(
    request: TurnRequest,
    runId: string,
    target: DeliveryContext | undefined,
    turn: TurnStart,
    opened: Pick<OpenedAgentSessions, "store" | "transcripts">,
    signal: AbortSignal,
  ) {
    const file = transcriptRef(turn.entry);
    const resolved = deps.resolveModel(request.model ?? sessionModelRef(config, request.agentId, turn.entry));
    const tools = (await deps.tools?.(toolContext(request, runId, target))) ?? {};
    const workspace = deps.workspaceOf?.(request.agentId);
    const system = joinPromptParts(
      await turnPromptParts({
        config,
        agentId: request.agentId,
        sessionKey: request.parsed.key,
        modelRef: resolved.ref,
        message: request.message,
        workspace,
        toolNames: Object.keys(tools),
        extra: request.extraSystemPrompt,
        readFiles,
      }),
    );
    // After a compaction, the summary stands in for everything before it.
    // Chat commands and their answers are kept for the chat's history, never shown to the model or counted (as /status counts).
    // A session this turn just started has a new sessionId, so no transcript yet: nothing to read.
    // A replayed turn reads anyway (its first attempt may have written lines).
    const fresh = turn.isNew && !request.resumed;
    const readContext = async () =>
      fresh
        ? []
        : sinceLastCompaction(
            (await opened.transcripts.recent(file, HISTORY_LIMIT)).filter((m) => !isCommandMessage(m)),
          );
    const context = await readContext();
    const compacted = await autoCompact({
      config,
      logger,
      sessions: opened,
      key: request.parsed.key,
      entry: turn.entry,
      messages: context,
      resolved,
      system,
      tools,
      workspaceWritable: async () => workspace !== undefined && (await isWritable(workspace)),
      now: deps.now ?? Date.now,
      signal,
    });
    if (!compacted) return { resolved, tools, system, context };
    if (target) {
      // Told once per compaction (the web and terminal chat get it as a chat.delivery event); a failed notice is recorded by the delivery gate.
      await deps
        .deliver({
          sessionKey: request.parsed,
          entry: turn.entry,
          target,
          text: COMPACTION_STRINGS.autoCompacted,
          kind: "notice",
          idempotencyKey: `${runId}:compacted`,
        })
        .catch(() => undefined);
    }
    return { resolved, tools, system, context: await readContext() };
  }

  /** `/verbose on`: one line per tool call to the chat (the web and terminal chat included), as the run goes; none for internal runs. */
  function verboseSink(request: TurnRequest, runId: string, target: DeliveryContext | undefined) {
    if (!target) return undefined;
    let calls = 0;
    // A failed notice is recorded by the delivery gate and the run goes on.
    return (call: { name: string; input: unknown }) =>
      void deps
        .deliver({
          sessionKey: request.parsed,
          target,
          text: toolCallSummary(call.name, call.input),
          kind: "notice",
          idempotencyKey: `${runId}:tool:${++calls}`,
        })
        .catch(() => undefined);
  }

  async function execute(
    request: TurnRequest,
    runId: string,
    signal: AbortSignal,
  ): Promise<Omit<RunRecord, "runId" | "sessionKey" | "queuedAt">> {
    runs.start(runId);
    const { store, transcripts, lifecycle } = await deps.sessions.forAgent(request.agentId);
    const turn: TurnStart & { written: Promise<void> } = request.isolated
      ? {
          entry: await lifecycle.startIsolatedRun(store, request.parsed),
          isNew: true,
          reason: "first",
          body: request.prompt ?? "",
          greeting: false,
          policy: lifecycle.policyFor(request.parsed, undefined),
          written: Promise.resolve(),
        }
      : lifecycle.beginTurn(store, {
          parsed: request.parsed,
          ...(request.message && { message: request.message }),
          ...(request.prompt !== undefined && { text: request.prompt }),
          ...(request.reset && { reset: request.reset }),
        });
    // The turn's own store writes are not waited for one by one: they share the journal with the
    // outbox, so the sync that lets the reply go out carries them. The turn's start is checked right
    // before its reply goes out (by the delivery gate); the usage recorded after the model, at the end.
    const target = request.deliver === false ? undefined : (request.deliver ?? routeOf(request.message));
    const said = request.reset?.said ?? request.prompt ?? request.message?.text ?? "";
    if (!turn.greeting && turn.body.trim() === "") {
      await turn.written;
      return { status: "ok", text: "" };
    }
    const file = transcriptRef(turn.entry);
    const {
      resolved,
      tools,
      system,
      context: tail,
    } = await prepare(request, runId, target, turn, { store, transcripts }, signal);
    // A replayed turn may find its own user line from the attempt a crash interrupted: kept once, not fed twice.
    const history = request.resumed ? tail.filter((m) => m.runId !== runId) : tail;
    if (!(request.resumed && tail.some((m) => m.role === "user" && m.runId === runId))) {
      await transcripts.append(
        file,
        {
          role: "user",
          content: turn.greeting ? said : turn.body,
          runId,
          ...(request.provenance && { provenance: request.provenance }),
        },
        { sessionId: turn.entry.sessionId },
      );
    }
    const stopTyping = target && showsTyping(deps.capabilitiesOf, target.channel) ? deps.typing?.(target) : undefined;
    const providerOptions = thinkingOptions(resolved.ref, turn.entry.thinkingLevel);
    const onToolCall = turn.entry.verboseLevel === "on" ? verboseSink(request, runId, target) : undefined;
    const result = await runAgentTurn({
      model: resolved.model,
      system,
      history: history as TranscriptMessage[],
      prompt: turn.greeting ? BARE_RESET_PROMPT : withQuote(turn.body, request.message),
      tools,
      maxSteps: config.models.maxSteps,
      signal,
      ...(providerOptions && { providerOptions }),
      ...(onToolCall && { onToolCall }),
    }).finally(() => stopTyping?.());
    const policy = target && {
      policy: config.session.sendPolicy,
      entry: store.get(request.parsed.key),
      key: request.parsed,
      channel: target.channel,
    };
    for (const message of markWithheld(result.newMessages.slice(1), policy))
      await transcripts.append(file, { ...message, runId }, { sessionId: turn.entry.sessionId });
    const { entry, written: usageWritten } = store.patchNow(request.parsed.key, () => ({
      model: resolved.ref,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      totalTokens: result.usage.totalTokens,
      systemSent: true,
      abortedLastRun: false,
    }));
    // Gateway clients see the reply as the run's events and result; every other chat gets it delivered.
    if (target && !servesGatewayClients(deps.capabilitiesOf, target.channel) && result.text.trim()) {
      // Quote the message answered, when the reply goes back to the chat it came from.
      const replyTo = request.deliver === undefined ? request.message?.messageId : undefined;
      await deps.deliver({
        sessionKey: request.parsed,
        ...(entry && { entry }),
        target,
        text: result.text,
        kind: "reply",
        idempotencyKey: `${runId}:reply`,
        ...(replyTo && { replyToMessageId: replyTo }),
        // The gate checks the turn's start right before sending, after the reply's own claim: the
        // start, the item and the claim then share one sync instead of waiting for two in a row.
        after: turn.written,
      });
    }
    // A turn whose start could not be stored fails; its reply was not sent (the gate checked the same write).
    await turn.written;
    // The reply may be out by now: a usage record that failed is logged, not turned into a failed run.
    await usageWritten.catch((err: unknown) =>
      logError(logger, err, "token usage not recorded", { sessionKey: request.parsed.key, runId }),
    );
    return { status: "ok", text: result.text };
  }

  async function fail(request: TurnRequest, runId: string, err: unknown, status: Exclude<RunEnd, "ok">): Promise<void> {
    const fields = { sessionKey: request.parsed.key, runId };
    // The chat edge logs the error (with an error id when it is unexpected) and says what people may read.
    const message = status === "error" ? chatErrorText(asModelError(err), logger, "agent run failed", fields) : status;
    if (status === "timeout") logError(logger, err, "agent run timed out", fields);
    runs.finish(runId, { status, error: message });
    deps.onEvent?.({
      type: "chat",
      sessionKey: request.parsed.key,
      runId,
      state: status === "aborted" ? "aborted" : "error",
      error: message,
    });
    if (status === "aborted") {
      const { store } = await deps.sessions.forAgent(request.agentId);
      // Best effort: the entry may have been deleted meanwhile.
      await store
        .patch(request.parsed.key, (current) => (current ? { abortedLastRun: true } : undefined))
        .catch(() => undefined);
      return;
    }
    const target = request.deliver === false ? undefined : (request.deliver ?? routeOf(request.message));
    if (target && !servesGatewayClients(deps.capabilitiesOf, target.channel)) {
      const text =
        status === "timeout" ? "⚠️ The agent took too long and was stopped." : `⚠️ The agent failed: ${message}`;
      // A failed notice is recorded by the delivery gate; nothing more to do here.
      await deps
        .deliver({ sessionKey: request.parsed, target, text, kind: "notice", idempotencyKey: `${runId}:error` })
        .catch(() => undefined);
    }
  }

  return {
    /**
     * Queues a turn on the session's lane and returns at once; `done` settles with the run's
     * record when it ends (never rejects).
     */
    enqueue(request: TurnRequest): { runId: string; done: Promise<RunRecord> } {
      const runId = request.runId ?? randomUUID();
      const existing = runs.get(runId);
      if (existing) return { runId, done: runs.wait(runId, 2 ** 31 - 1).then((r) => r ?? existing) };
      const { signal: abortSignal } = runs.create(runId, request.parsed.key);
      const timeoutMs = request.timeoutMs ?? config.models.timeoutSeconds * 1000;
      const done = deps.lanes
        .run(request.parsed.key, async () => {
          // A /stop while the turn waits for a slot ends the wait (rejected: ended as aborted below).
          const holder = request.message
            ? { release: await chatSlots.acquire(abortSignal), waits: 0, signal: abortSignal }
            : undefined;
          if (holder) holders.set(runId, holder);
          let timeout: AbortSignal | undefined;
          try {
            abortSignal.throwIfAborted();
            await request.onStart?.();
            timeout = AbortSignal.timeout(timeoutMs);
            const result = await execute(request, runId, AbortSignal.any([abortSignal, timeout]));
            runs.finish(runId, { status: "ok", ...(result.text !== undefined && { text: result.text }) });
            deps.onEvent?.({
              type: "chat",
              sessionKey: request.parsed.key,
              runId,
              state: "final",
              text: result.text ?? "",
            });
          } catch (err) {
            await fail(request, runId, err, abortSignal.aborted ? "aborted" : timeout?.aborted ? "timeout" : "error");
          } finally {
            holders.delete(runId);
            holder?.release();
          }
        })
        // Rejected before it ran: aborted while queued, or the lane was cleared by /stop.
        .catch((err) => fail(request, runId, err, "aborted"))
        .then(() => runs.get(runId)!);
      return { runId, done };
    },

    /**
     * Runs `wait` (run `runId`'s tool waiting for another session's turn, as `sessions_send` does)
     * with the run's chat slot given back meanwhile, and takes one again, ahead of turns that have
     * not started, before returning. So a chat turn never holds a slot while it waits for a turn
     * that is itself queued behind a chat turn waiting for a slot. Runs without a slot just wait.
     */
    async waitOutsideSlot<T>(runId: string, wait: () => Promise<T>): Promise<T> {
      const holder = holders.get(runId);
      if (!holder) return wait();
      // Tool calls of one step run in parallel: the slot is given back by the first and taken by the last.
      if (holder.waits++ === 0) holder.release();
      try {
        return await wait();
      } finally {
        if (--holder.waits === 0) holder.release = await chatSlots.acquire(holder.signal, { first: true });
      }
    },

    /** Aborts the session's running turn and clears its queue; returns the aborted run ids. */
    abortSession(sessionKey: string): { runIds: string[]; cleared: number } {
      const active = runs.active(sessionKey);
      const cleared = deps.lanes.clear(sessionKey);
      for (const run of active) runs.abort(run.runId, "aborted");
      return { runIds: active.map((run) => run.runId), cleared };
    },

    /** The chat-turn slots: held and waited for (metrics). */
    chatSlots: () => chatSlots,
  };
}

function toolContext(request: TurnRequest, runId: string, target: DeliveryContext | undefined): ToolContext {
  const { provenance } = request;
  const origin = target ?? routeOf(request.message);
  return {
    agentId: request.agentId,
    sessionKey: request.parsed,
    runId,
    owner: request.owner ?? false,
    ...(origin && { origin }),
    ...(provenance?.traceId && { trace: { traceId: provenance.traceId, hop: provenance.hop ?? 0 } }),
  };
}

/** The message text for the model, led by the message it replies to or quotes (platform context, not the person's words). */
function withQuote(body: string, message: InboundMessage | undefined): string {
  const quoted = message?.replyTo?.text?.trim();
  if (!quoted) return body;
  const who = message?.replyTo?.fromBot ? "your earlier message" : "an earlier message";
  return `[In reply to ${who}: "${quoted.length > 500 ? `${quoted.slice(0, 500)}…` : quoted}"]\n${body}`;
}

/** The chat a message came from, as a delivery target. */
export function routeOf(message: InboundMessage | undefined): DeliveryContext | undefined {
  if (!message) return undefined;
  return {
    channel: message.channel,
    to: message.chat.id,
    accountId: message.accountId,
    ...(message.chat.threadId && { threadId: message.chat.threadId }),
  };
}

/** The agent runtime. */
export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
