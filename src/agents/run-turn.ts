import { replyKey } from "./run-delivery-keys.js";
import { showsTyping } from "../delivery/capabilities-of.js";
import { logError } from "../errors.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import { type OpenedAgentSessions, transcriptRef } from "../sessions/agent-sessions.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import { BARE_RESET_PROMPT } from "../sessions/session-lifecycle.js";
import type { TranscriptMessage } from "../sessions/transcripts/index.js";
import { type StartedTurn, beginTurn } from "./begin-turn.js";
import { thinkingOptions } from "./models/thinking-options.js";
import { type PreparedTurn, prepareTurn } from "./prepare-turn.js";
import { recordedTools } from "./recorded-tools.js";
import { type AgentTurnResult, runAgentTurn } from "./run-agent-turn.js";
import type { TurnEnv } from "./runtime-deps.js";
import type { Turn } from "./turn.js";
import { verboseSink } from "./turn-notices.js";
import { markWithheld } from "./withheld-reply.js";

/** The user line of the turn, unless a replayed turn finds its own from the attempt a crash interrupted (kept once, not fed twice). */
async function appendUserLine(turn: Turn, start: StartedTurn, opened: OpenedAgentSessions, tail: TranscriptMessage[]) {
  const { request, runId } = turn;
  if (request.resumed && tail.some((m) => m.role === "user" && m.runId === runId)) return;
  const content = start.greeting ? (request.reset?.said ?? request.prompt ?? request.message?.text ?? "") : start.body;
  const line = { role: "user" as const, content, runId, ...(request.provenance && { provenance: request.provenance }) };
  const options = { sessionId: start.entry.sessionId, sessionKey: request.parsed.key };
  await opened.transcripts.append(transcriptRef(start.entry), line, options);
}

/** The model's answer to the turn, with the chat's typing indicator meanwhile and `/verbose` lines as tools are called. */
function callModel(env: TurnEnv, turn: Turn, start: StartedTurn, prepared: PreparedTurn, history: TranscriptMessage[]) {
  const { target } = turn;
  const stopTyping = target && showsTyping(env.capabilitiesOf, target.channel) ? env.typing?.(target) : undefined;
  const providerOptions = thinkingOptions(prepared.resolved.ref, start.entry.thinkingLevel);
  const onToolCall =
    start.entry.verboseLevel === "on" ? verboseSink(env.deliver, turn.request.parsed, turn.runId, target) : undefined;
  // Each tool call is recorded before the model sees its result; a replayed turn is answered from the record.
  const tools = env.toolRecord
    ? recordedTools(prepared.tools, env.toolRecord, turn.runId, turn.request.parsed.key)
    : prepared.tools;
  return runAgentTurn({
    model: prepared.resolved.model,
    system: prepared.system,
    history,
    prompt: start.greeting ? BARE_RESET_PROMPT : withQuote(start.body, turn.request.message),
    tools,
    maxSteps: env.config.models.maxSteps,
    signal: turn.signal,
    ...(providerOptions && { providerOptions }),
    ...(onToolCall && { onToolCall }),
    ...(turn.request.steer && { steer: turn.request.steer }),
  }).finally(() => stopTyping?.());
}

/**
 * The turn's new messages in the transcript (a reply sendPolicy keeps from its chat marked withheld)
 * and its token usage, queued in one synchronous step: `appended` settles when the messages are stored.
 */
function recordResult(
  env: TurnEnv,
  turn: Turn,
  start: StartedTurn,
  opened: OpenedAgentSessions,
  prepared: PreparedTurn,
  result: AgentTurnResult,
) {
  const { request, runId, target } = turn;
  const key = request.parsed;
  const policy = target && {
    policy: env.config.session.sendPolicy,
    entry: opened.store.get(key.key),
    key,
    channel: target.channel,
  };
  const ref = transcriptRef(start.entry);
  const appends = markWithheld(result.newMessages.slice(1), policy).map((message) =>
    opened.transcripts.append(ref, { ...message, runId }, { sessionId: start.entry.sessionId, sessionKey: key.key }),
  );
  const appended = Promise.all(appends).then(() => undefined);
  appended.catch(() => undefined); // judged by the caller, after the delivery that waited for it
  const patched = opened.store.patchNow(key.key, () => ({
    model: prepared.resolved.ref,
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
    totalTokens: result.usage.totalTokens,
    systemSent: true,
    abortedLastRun: false,
  }));
  return { ...patched, appended };
}

/** The reply to the turn's chat, whichever chat it is (the web and terminal chat included): one way out, through the gate; true once handed over. */
async function deliverReply(
  env: TurnEnv,
  turn: Turn,
  start: StartedTurn,
  entry: SessionEntry | undefined,
  text: string,
  appended: Promise<void>,
) {
  const { request, target } = turn;
  if (!target || !text.trim()) return false;
  // Quote the message answered, when the reply goes back to the chat it came from.
  const replyTo = request.deliver === undefined ? request.message?.messageId : undefined;
  await env.deliver({
    sessionKey: request.parsed,
    ...(entry && { entry }),
    target,
    text,
    kind: "reply",
    idempotencyKey: replyKey(turn.runId),
    ...(replyTo && { replyToMessageId: replyTo }),
    // The gate checks the turn's start and its transcript lines right before sending, after the
    // reply's own claim: they then share one sync instead of waiting for two in a row.
    after: Promise.all([start.written, appended]),
  });
  return true;
}

/**
 * Runs one turn: starts it on its session, prepares it, runs the model, records what it said and
 * delivers the reply. The turn's own store writes are not waited for one by one: they share the
 * journal with the outbox, so the sync that lets the reply go out carries them.
 */
export async function runTurn(env: TurnEnv, turn: Turn): Promise<{ status: "ok"; text: string }> {
  env.runs.start(turn.runId);
  const opened = await env.sessions.forAgent(turn.request.agentId);
  const start = await beginTurn(turn.request, opened);
  if (!start.greeting && start.body.trim() === "") {
    await start.written;
    return { status: "ok", text: "" };
  }
  const prepared = await prepareTurn(env, turn, start, opened);
  // Not waited for here: it commits while the model runs, and before the reply's lines (appends keep their order).
  const userLine = appendUserLine(turn, start, opened, prepared.context);
  userLine.catch(() => undefined); // judged with the reply's lines, before the reply goes out
  const history = turn.request.resumed ? prepared.context.filter((m) => m.runId !== turn.runId) : prepared.context;
  // A run id a caller reused for a new turn (not a replay) must not be answered from an older turn's calls.
  if (!turn.request.resumed) await env.toolRecord?.forget(turn.runId);
  const result = await callModel(env, turn, start, prepared, history);
  const recorded = recordResult(env, turn, start, opened, prepared, result);
  // The run's end rides the same commit as its lines and reply (PostgreSQL: `run_results`), so a
  // gateway taking over after a crash answers `agent.wait` with it exactly when the reply is stored.
  env.runs.recordEnd(turn.runId, { status: "ok", text: result.text });
  const { entry, written: usageWritten } = recorded;
  const appended = Promise.all([userLine, recorded.appended]).then(() => undefined);
  // Transcripts that join the state port's commit (PostgreSQL): the messages, the session row and
  // the reply's outbox item are queued in this one step, one transaction. Others store the lines
  // first: a crash before the outbox item replays the turn (its lines are recognized by run id).
  if (!opened.transcripts.joinsStateCommit) await appended;
  const handedOver = await deliverReply(env, turn, start, entry, result.text, appended);
  await appended;
  // A turn whose start could not be stored fails; its reply was not sent (the gate checked the same write).
  await start.written;
  // A replay only marks done a turn whose reply is in the outbox: its tool calls need no record any more.
  void (handedOver ? env.toolRecord?.forget(turn.runId) : env.toolRecord?.ended(turn.runId))?.catch((err: unknown) =>
    logError(env.logger, err, "tool-call record not pruned", { runId: turn.runId }),
  );
  // The reply may be out by now: a usage record that failed is logged, not turned into a failed run.
  await usageWritten.catch((err: unknown) =>
    logError(env.logger, err, "token usage not recorded", { sessionKey: turn.request.parsed.key, runId: turn.runId }),
  );
  return { status: "ok", text: result.text };
}

/** The message text for the model, led by the message it replies to or quotes (platform context, not the person's words). */
function withQuote(body: string, message: InboundMessage | undefined): string {
  const quoted = message?.replyTo?.text?.trim();
  if (!quoted) return body;
  const who = message?.replyTo?.fromBot ? "your earlier message" : "an earlier message";
  return `[In reply to ${who}: "${quoted.length > 500 ? `${quoted.slice(0, 500)}…` : quoted}"]\n${body}`;
}
