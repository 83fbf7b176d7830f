import { resolveQueueSettings } from "../../agents/queue/queue-settings.js";
import { chatErrorText } from "../../errors.js";
import { contextWindowOf } from "../../agents/models/context-window.js";
import type { SessionEntry } from "../../sessions/session-entry.js";
import { MCP_AT_LEAST_ONCE } from "../../tools/mcp/mcp-manager.js";
import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { describeResetPolicy, formatAge, formatRunEnd, formatSpan, formatTokens } from "../command-format.js";
import { policySource } from "../command-strings.js";
import { sendVerdict } from "./send-command.js";
import { estimateContext, sessionModel } from "../session-context.js";

const MAX_FAILURES_SHOWN = 3;

function modelLine(scope: CommandScope, entry: SessionEntry | undefined): string {
  const { ref, resolved, failure } = sessionModel(scope, entry);
  if (!resolved) {
    // A known error says why; a bug says sorry with an error id, and the log has the whole error.
    const why = chatErrorText(failure, scope.deps.logger, "the session's model cannot be built", {
      sessionKey: scope.context.sessionKey.key,
      model: ref,
    });
    return `Model: ${ref} (cannot run: ${why})`;
  }
  return `Model: ${ref}${resolved?.offline ? " (the built-in offline model: no network, deterministic answers)" : ""}`;
}

async function usageLine(scope: CommandScope, entry: SessionEntry): Promise<string> {
  const window = contextWindowOf(scope.deps.config, sessionModel(scope, entry).ref);
  const context = await estimateContext(scope.sessions, entry, window);
  return (
    `Tokens (last turn): ${formatTokens(entry.inputTokens ?? 0)} in / ${formatTokens(entry.outputTokens ?? 0)} out · ` +
    `Context: ${context.text} · Compactions: ${entry.compactionCount ?? 0}`
  );
}

function sessionLine({ context, now }: CommandScope, entry: SessionEntry | undefined): string {
  if (!entry) return `Session: ${context.sessionKey.key} · no activity yet`;
  const started = entry.createdAt === undefined ? "" : ` · started ${formatAge(entry.createdAt, now())}`;
  return `Session: ${context.sessionKey.key} · id ${entry.sessionId}${started} · last turn ${formatAge(entry.updatedAt, now())}`;
}

function sendLine(scope: CommandScope, entry: SessionEntry | undefined): string {
  const verdict = sendVerdict(scope, entry);
  return `Send policy: ${verdict.decision} (${policySource(verdict)})`;
}

/** The session's queue: running or idle, what waits (queued turns of other kinds plus the queue's messages) and its mode. */
function queueLine({ context, deps, sessions }: CommandScope): string {
  const key = context.sessionKey.key;
  const queue = deps.runtime.waiting(key);
  const waiting = deps.lanes.queued(key) - queue.turns + queue.messages;
  const { mode } = resolveQueueSettings(deps.config, {
    agentId: context.agentId,
    channel: context.message.channel,
    accountId: context.message.accountId,
    entry: sessions.store.get(key),
  });
  return `Queue: ${deps.lanes.busy(key) ? "a turn is running" : "idle"}, ${waiting} waiting (${mode})`;
}

function subagentsLine({ context, deps, now }: CommandScope): string {
  const all = deps.subagents?.list(context.sessionKey.key) ?? [];
  const running = all.filter((s) => s.status === "running");
  const labels = running.map((s) => s.label ?? s.runId.slice(0, 8));
  const ended = all.filter((s) => s.status !== "running");
  const lastEnded = ended[0];
  const last =
    lastEnded && lastEnded.status !== "running"
      ? ` (last ${formatRunEnd(lastEnded.status)} ${formatAge(lastEnded.endedAt ?? lastEnded.startedAt, now())})`
      : "";
  return `Sub-agents: ${running.length} running${labels.length ? ` (${labels.join(", ")})` : ""}, ${ended.length} ended${last}`;
}

/** Replies still waiting to go out, e.g. while the platform is unreachable: the outbox keeps retrying them. */
function pendingLines({ context, deps, now }: CommandScope): string[] {
  const pending = deps.gate.pendingItems(context.sessionKey.key);
  if (pending.length === 0) return [];
  const retrying = pending.filter((p) => p.attempts > 0);
  return [
    `Delivery pending: ${pending.length} (${retrying.length} retrying)`,
    ...retrying
      .slice(0, MAX_FAILURES_SHOWN)
      .map(
        (p) =>
          `  ${p.kind} to ${p.target.channel}:${p.target.to ?? "?"}: ${p.attempts} failed ${p.attempts === 1 ? "try" : "tries"} since ${formatAge(p.createdAt, now())}, next in ${formatSpan(p.nextAttemptAt - now())}${p.lastError ? `: ${p.lastError.reason} (${p.lastError.message})` : ""}`,
      ),
  ];
}

function failureLines({ context, deps, now }: CommandScope): string[] {
  const failures = deps.gate.failures(context.sessionKey.key);
  if (failures.length === 0) return ["Delivery failures: none"];
  return [
    `Delivery failures: ${failures.length}`,
    ...failures
      .slice(0, MAX_FAILURES_SHOWN)
      .map(
        (f) =>
          `  ${formatAge(f.updatedAt, now())}: ${f.kind} to ${f.target.channel}:${f.target.to ?? "?"}: ${f.lastError?.reason ?? "failed"}${f.lastError ? ` (${f.lastError.message})` : ""}`,
      ),
  ];
}

function resetLine({ context, sessions, now }: CommandScope, entry: SessionEntry | undefined): string {
  const policy = sessions.lifecycle.policyFor(context.sessionKey, context.message.channel);
  if (!entry) return `Reset: ${describeResetPolicy(policy)}`;
  const freshness = sessions.lifecycle.freshness(entry, context.sessionKey);
  const when = freshness.fresh
    ? `this session expires in ${formatSpan(freshness.expiresAt - now())}`
    : `this session expired (${freshness.staleBy}); the next message starts a new one`;
  return `Reset: ${describeResetPolicy(policy)} · ${when}`;
}

function togglesLine(entry: SessionEntry | undefined): string {
  return `Thinking: ${entry?.thinkingLevel ?? "off"} · Verbose: ${entry?.verboseLevel === "on" ? "on" : "off"}`;
}

function channelLines({ context, deps, now }: CommandScope): string[] {
  const { channel, accountId } = context.message;
  const health = deps.accountHealth?.(channel, accountId);
  if (!health) return [];
  const parts = [
    `${channel} account ${accountId}: ${health.sendOnly ? "send-only (another gateway receives it)" : health.connected ? "connected" : "not connected"}`,
    ...(health.credentialsSavedAt !== undefined
      ? [`credentials last refreshed ${formatAge(health.credentialsSavedAt, now())}`]
      : []),
  ];
  return [`Channel: ${parts.join(" · ")}`, ...(health.lastError ? [`  ${health.lastError}`] : [])];
}

function mcpLines({ deps }: CommandScope): string[] {
  const servers = deps.mcpStatus?.() ?? [];
  if (servers.length === 0) return [];
  const shown = servers.map((s) =>
    s.state === "connected"
      ? `${s.name} connected (${s.tools.length} tools)`
      : `${s.name} ${s.state}${s.error ? `: ${s.error}` : ""}`,
  );
  return [`MCP: ${shown.join(" · ")}`, MCP_AT_LEAST_ONCE];
}

/** Messages of this session set aside because their turn stopped the gateway at every start. */
function setAsideLines({ context, deps, now }: CommandScope): string[] {
  const entries = (deps.setAside?.() ?? []).filter((e) => e.session === context.sessionKey.key);
  if (entries.length === 0) return [];
  return [
    `Set aside: ${entries.length} message(s) not answered (switchboard inbox list|retry|drop)`,
    ...entries.slice(0, MAX_FAILURES_SHOWN).map((e) => `  ${e.id}, ${formatAge(e.setAsideAt, now())}: ${e.reason}`),
  ];
}

/** `/status`: model, usage, session, send policy, queue, sub-agents, delivery failures, reset policy. */
export const statusCommand = defineCommand({
  name: "status",
  usage: "/status",
  summary:
    "Shows the session: model, tokens and context size of the model's window, thinking and verbose, key and age, send policy and what decided it, queue, sub-agents, replies waiting to be delivered and delivery failures, messages set aside, reset policy and expiry, the channel account's connection (and when a linked device last refreshed its credentials), MCP servers.",
  access: "commands",
  async run(_command, scope) {
    const entry = scope.sessions.store.get(scope.context.sessionKey.key);
    const lines = [
      modelLine(scope, entry),
      ...(entry ? [await usageLine(scope, entry)] : []),
      togglesLine(entry),
      sessionLine(scope, entry),
      sendLine(scope, entry),
      queueLine(scope),
      subagentsLine(scope),
      ...pendingLines(scope),
      ...failureLines(scope),
      ...setAsideLines(scope),
      resetLine(scope, entry),
      ...channelLines(scope),
      ...mcpLines(scope),
    ];
    return { reply: lines.join("\n") };
  },
});
