import { parseSessionKey } from "../routing/parse-session-key.js";
import { transcriptRef } from "../sessions/agent-sessions.js";
import { announceBody, announceStatsLine } from "./announce-body.js";
import { ANNOUNCE_SKIP, isSkipToken } from "./skip-tokens.js";
import type { SubagentRecord, SubagentRegistryDeps } from "./subagent-record.js";

/** The idempotency key of a sub-agent run's announce (one per run, across restarts). */
const announceKey = (runId: string) => `announce:${runId}`;

/** What the child is asked in its announce step. */
function announceContext(record: SubagentRecord): string {
  return [
    "Sub-agent announce step:",
    `Requester session: ${record.requesterKey}.`,
    `Post target channel: ${record.origin.channel}.`,
    `Original task: ${record.task}`,
    `Sub-agent result: ${record.result?.trim() || "(not available)"}`,
    "Announce the outcome to the requester with a brief summary, in exactly this format (the system adds Status):",
    "Result: <summary>",
    "Notes: <extra context>",
    `Reply "${ANNOUNCE_SKIP}" only if the task failed completely with no useful output.`,
  ].join("\n");
}

/** The child's own summary (an internal turn on its session); the task's result when that step fails. */
async function announceStep(deps: SubagentRegistryDeps, record: SubagentRecord): Promise<string> {
  const { done } = deps.runtime().enqueue({
    parsed: parseSessionKey(record.childSessionKey)!,
    agentId: record.childAgentId,
    prompt: "Sub-agent announce step.",
    deliver: false,
    extraSystemPrompt: announceContext(record),
    provenance: { kind: "system" },
  });
  const step = await done;
  return step.status === "ok" ? (step.text ?? "") : (record.result ?? "");
}

/** The announce: Status, the child's Result and Notes, and the stats line (local paths only for the gateway's own clients). */
async function announceText(deps: SubagentRegistryDeps, record: SubagentRecord, reply: string): Promise<string> {
  const { store, transcripts } = await deps.sessions.forAgent(record.childAgentId);
  const entry = store.get(record.childSessionKey);
  const stats = announceStatsLine(
    {
      runtimeMs: record.startedAt && record.endedAt ? record.endedAt - record.startedAt : undefined,
      ...record.usage,
      ...(entry && { sessionId: entry.sessionId, transcriptPath: transcripts.location(transcriptRef(entry)) }),
      sessionKey: record.childSessionKey,
    },
    { mode: deps.announceStats ?? "full", localClient: record.origin.channel === deps.clientChannel },
  );
  return announceBody({
    outcome: record.outcome ?? "error",
    ...(record.error && { error: record.error }),
    reply,
    stats,
    ...(record.label && { label: record.label }),
  });
}

/**
 * Announces an ended sub-agent run to the chat it was spawned from: handed to the requester (the
 * gateway stores it in the requester's inbox under `announce:<runId>`; its runner keeps it in the
 * requester's history and delivers it exactly once). Nothing when it was handed over before a
 * restart, stopped, or the child said skip.
 */
export async function announceEnded(deps: SubagentRegistryDeps, record: SubagentRecord): Promise<void> {
  const id = announceKey(record.runId);
  if (deps.handedOver(id) || record.outcome === "stopped") return;
  const reply = await announceStep(deps, record);
  if (isSkipToken(reply, ANNOUNCE_SKIP)) return;
  const text = await announceText(deps, record, reply);
  const requester = parseSessionKey(record.requesterKey)!;
  const agentId = "agentId" in requester ? requester.agentId : record.childAgentId;
  await deps.handOver({ id, requesterKey: requester.key, agentId, target: record.origin, text });
}
