import { randomUUID } from "node:crypto";
import { z } from "zod";
import { sessionModelRef } from "../../agents/agent-runtime.js";
import { contextWindowOf } from "../../agents/models/context-window.js";
import { COMMAND_LIST } from "../../commands/command-table.js";
import { estimateContext } from "../../commands/session-context.js";
import type { OutboxItem } from "../../delivery/outbox-item.js";
import { resolveSendPolicy } from "../../delivery/send-policy.js";
import { normalizeAgentId } from "../../routing/normalize.js";
import { formatSessionKey } from "../../routing/session-key.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";
import type { SessionPanelCore } from "./read-core.js";
import { sessionRow, titleOf } from "./session-methods.js";

const keyParam = z.string().trim().min(1).describe('a session key, e.g. "agent:main:main"');
const MAX_FAILURES = 10;

/** The fields of an outbox item the panel shows for a waiting and a failed message alike. */
const outboxRow = (item: OutboxItem) => ({
  id: item.id,
  kind: item.kind,
  channel: item.target.channel,
  to: item.target.to,
  attempts: item.attempts,
});
const errorText = (item: OutboxItem) => item.lastError && `${item.lastError.reason}: ${item.lastError.message}`;

/** A session's sub-agents as the panel lists them. */
function subagentRows(core: SessionPanelCore, key: string) {
  return core.subagents.list(key).map((record) => ({
    runId: record.runId,
    childSessionKey: record.childSessionKey,
    task: record.task,
    ...(record.label && { label: record.label }),
    state: record.state,
    ...(record.outcome && { outcome: record.outcome }),
    createdAt: record.createdAt,
    ...(record.endedAt !== undefined && { endedAt: record.endedAt }),
  }));
}

/** A session's replies still waiting to be delivered and its delivery failures (the newest few of each). */
function deliveryRows(core: SessionPanelCore, key: string) {
  const pending = core.gate
    .pendingItems(key)
    .slice(0, MAX_FAILURES)
    .map((item) => ({
      ...outboxRow(item),
      since: item.createdAt,
      nextAttemptAt: item.nextAttemptAt,
      ...(item.lastError && { error: errorText(item) }),
    }));
  const failures = core.gate
    .failures(key)
    .slice(0, MAX_FAILURES)
    .map((item) => ({ ...outboxRow(item), at: item.updatedAt, error: errorText(item) ?? "failed" }));
  return { pending, failures };
}

/**
 * `sessions.get`: one session as the control UI's panel shows it: its title, its row (model,
 * tokens, send policy override), the model and context window it runs with, the context estimate
 * `/status` shows, the effective send policy, the runs active on it, its sub-agents, its replies
 * still waiting to be delivered and its delivery failures. A session without an entry yet is `{exists: false}` with the defaults it
 * would run with.
 */
export const sessionsGet = defineMethod({
  name: "sessions.get",
  params: z.strictObject({ key: keyParam }),
  async handle(core: SessionPanelCore, p) {
    const { parsed, agentId } = core.parseKey(p.key);
    const opened = await core.sessions.forAgent(agentId);
    const entry = opened.store.get(parsed.key);
    const model = sessionModelRef(core.config, agentId, entry);
    const window = contextWindowOf(core.config, model);
    const verdict = resolveSendPolicy({ policy: core.config.session.sendPolicy, entry, key: parsed });
    return {
      key: parsed.key,
      kind: parsed.kind,
      agentId,
      title: titleOf(core, parsed, entry),
      exists: entry !== undefined,
      ...(entry && { session: sessionRow(core, parsed, agentId, entry) }),
      model,
      contextWindow: window,
      context: await estimateContext(opened, entry, window),
      sendPolicy: { override: entry?.sendPolicy ?? "inherit", effective: verdict.decision },
      busy: core.lanes.busy(parsed.key),
      queued: core.lanes.queued(parsed.key),
      activeRuns: core.runs
        .active(parsed.key)
        .map((run) => ({ runId: run.runId, status: run.status, queuedAt: run.queuedAt, startedAt: run.startedAt })),
      subagents: subagentRows(core, parsed.key),
      ...deliveryRows(core, parsed.key),
    };
  },
});

/** `subagents.stop`: stops one running sub-agent of a session (or all of them) and the sub-agents it spawned. */
export const subagentsStop = defineMethod({
  name: "subagents.stop",
  params: z.strictObject({ sessionKey: keyParam, runId: z.string().min(1).optional() }),
  async handle(core, p) {
    const { parsed } = core.parseKey(p.sessionKey);
    if (p.runId && core.subagents.get(p.runId)?.requesterKey !== parsed.key)
      throw new GatewayError(
        GatewayErrorCodes.NOT_FOUND,
        `No sub-agent run ${p.runId} of ${parsed.key}; sessions.get lists them.`,
      );
    const stopped = await core.subagents.stop(parsed.key, p.runId);
    return { ok: true, stopped };
  },
});

/** `commands.list`: the slash commands (name, usage, summary, who may run them), for completion and help. */
export const commandsList = defineMethod({
  name: "commands.list",
  params: z.strictObject({}),
  async handle() {
    return {
      commands: COMMAND_LIST.map((c) => ({ name: c.name, usage: c.usage, summary: c.summary, access: c.access })),
    };
  },
});

/**
 * `sessions.create`: a new, empty conversation of one agent on the gateway's own client channel,
 * so the control UI never writes a key: the key (`agent:<id>:<client channel>:dm:<uuid>`) is built
 * by routing. The entry appears with the first message or a `sessions.patch` (a label).
 */
export const sessionsCreate = defineMethod({
  name: "sessions.create",
  params: z.strictObject({ agentId: z.string().trim().min(1).optional() }),
  async handle(core, p) {
    const agentId = normalizeAgentId(p.agentId ?? core.defaultAgentId());
    if (!core.agentIds().includes(agentId))
      throw new GatewayError(
        GatewayErrorCodes.INVALID_REQUEST,
        `unknown agent "${agentId}" (agents: ${core.agentIds().join(", ")})`,
      );
    const key = formatSessionKey({ kind: "dm", agentId, channel: core.clientChannel, peerId: randomUUID() });
    return { key: core.parseKey(key).parsed.key };
  },
});
