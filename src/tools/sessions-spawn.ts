import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { StoredTurn } from "../agents/stored-turn.js";
import { mainSessionKey, subagentSessionKey } from "../routing/session-key-refs.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import { spawnableAgents } from "./agents-list.js";
import { storedRunId } from "../agents/uuid-v5.js";
import { type SpawnTurnInput, spawnDedupeKey } from "./spawn-turn.js";
import type { ToolDeps } from "./tool-deps.js";
import { type ToolCaller, ToolFailure, defineTool, provenanceOf } from "./tool-definition.js";

type ModelChoice = { provider: string; model: string };

function subagentPrompt(input: {
  task: string;
  label?: string | undefined;
  requesterKey: string;
  channel: string;
  child: string;
}): string {
  return [
    "# Subagent Context",
    "You are a sub-agent spawned by another agent session to handle one task.",
    `## Your Role\nYou were created to handle: ${input.task.replace(/\s+/g, " ")}\nFinish that task; you are not the main agent.`,
    "## Rules\nStay focused on the task. Your final message is reported back automatically. You may be stopped at any time.",
    "## Output Format\nWhat you did or found, with the relevant details, concisely.",
    "## What You DON'T Do\nNo conversations with the user, no messages to other chats, no pretending to be the main agent.",
    `## Session Context\n${input.label ? `- Label: ${input.label}\n` : ""}- Requester session: ${input.requesterKey}.\n- Requester channel: ${input.channel}.\n- Your session: ${input.child}.`,
  ].join("\n\n");
}

/** Where the announce goes: the chat the request came from, else the requester's route, else the gateway's clients. */
async function originOf(deps: ToolDeps, caller: ToolCaller, requesterKey: string): Promise<DeliveryContext> {
  if (caller.origin) return caller.origin;
  const entry = (await deps.sessions.forAgent(caller.agentId)).store.get(requesterKey);
  return entryDeliveryContext(entry) ?? { channel: deps.clientChannel, to: requesterKey };
}

function resolveModelChoice(deps: ToolDeps, requested: string): ModelChoice {
  const wanted = requested.trim().toLowerCase();
  const hit = deps.catalog.entries.find(
    (e) => `${e.provider}/${e.model}`.toLowerCase() === wanted || e.aliases?.some((a) => a.toLowerCase() === wanted),
  );
  if (!hit) {
    const valid = deps.catalog.entries
      .map((e) => [`${e.provider}/${e.model}`, ...(e.aliases ?? [])].join(" | "))
      .join(", ");
    throw new ToolFailure("error", `invalid model "${requested}"; valid models: ${valid}`);
  }
  return { provider: hit.provider, model: hit.model };
}

const SpawnInput = z.strictObject({
  task: z.string().trim().min(1).describe("what the sub-agent should do"),
  label: z.string().trim().max(64).optional().describe("a short name for logs and the announce"),
  agentId: z.string().trim().min(1).optional().describe("run under this agent (see agents_list); default your own"),
  model: z.string().trim().min(1).optional().describe('model for the sub-agent, e.g. "offline/echo"'),
  runTimeoutSeconds: z
    .number()
    .min(0)
    .max(24 * 3600)
    .optional()
    .describe("stop the sub-agent after this many seconds (0 = the default timeout)"),
  cleanup: z
    .enum(["delete", "keep"])
    .optional()
    .describe("delete the sub-agent session after the announce, or keep it (archived later); default keep"),
});

/** The agent the child runs under, when the caller may spawn it there. */
function spawnTarget(deps: ToolDeps, caller: ToolCaller, agentId: string | undefined): string {
  if (caller.sessionKey?.kind === "subagent")
    throw new ToolFailure("forbidden", "sessions_spawn is not allowed from sub-agent sessions");
  const targetAgent = (agentId ?? caller.agentId).toLowerCase();
  const allowed = spawnableAgents(deps.config, caller.agentId, deps.agentIds());
  if (!allowed.includes(targetAgent)) {
    throw new ToolFailure(
      "forbidden",
      `agentId "${targetAgent}" is not allowed for sessions_spawn (allowed: ${allowed.join(", ") || "none"}; see agents.list[].subagents.allowAgents)`,
    );
  }
  return targetAgent;
}

/** The spawn as its stored turn in the child's inbox: the task, one hop further along the caller's trace. */
function spawnTurn(
  caller: ToolCaller,
  input: z.output<typeof SpawnInput>,
  spawn: { child: string; targetAgent: string; requesterKey: string; origin: DeliveryContext; model?: ModelChoice },
): StoredTurn {
  const { child, targetAgent, requesterKey, origin, model } = spawn;
  const traceId = caller.trace?.traceId ?? randomUUID();
  const hop = (caller.trace?.hop ?? 0) + 1;
  const timeoutSeconds = Math.floor(input.runTimeoutSeconds ?? 0);
  const stored: SpawnTurnInput = {
    agentId: targetAgent,
    requesterKey,
    origin,
    cleanup: input.cleanup ?? "keep",
    ...(input.label && { label: input.label }),
    ...(model && { model }),
    ...(timeoutSeconds > 0 && { timeoutMs: timeoutSeconds * 1000 }),
    ...(caller.callId && { callId: caller.callId }),
    extraSystemPrompt: subagentPrompt({
      task: input.task,
      label: input.label,
      requesterKey,
      channel: origin.channel,
      child,
    }),
  };
  return {
    source: "spawn",
    sessionKey: child,
    text: input.task,
    owner: caller.owner ?? false,
    provenance: provenanceOf(caller, hop, traceId),
    input: stored,
  };
}

/**
 * `sessions_spawn`: starts a sub-agent in its own session and returns at once; when it ends, its
 * result is announced (Status/Result/Notes and stats) into the chat the request came from.
 */
export const sessionsSpawnTool = defineTool({
  name: "sessions_spawn",
  description:
    "Spawn a background sub-agent in an isolated session; its result is announced back into this chat when it finishes.",
  input: SpawnInput,
  async run(input, caller, deps: ToolDeps) {
    const targetAgent = spawnTarget(deps, caller, input.agentId);
    const model = input.model ? resolveModelChoice(deps, input.model) : undefined;
    const requesterKey = caller.sessionKey?.key ?? mainSessionKey(caller.agentId, deps.keys.mainKey);
    const origin = await originOf(deps, caller, requesterKey);
    const child = subagentSessionKey(targetAgent, randomUUID());
    const turn = spawnTurn(caller, input, { child, targetAgent, requesterKey, origin, ...(model && { model }) });
    // Stored in the child's inbox before the answer; the same call again (its turn replayed after a
    // crash cut it off) finds it under its dedupe key and answers with that child, not a second one.
    const dedupeKey = caller.callId === undefined ? undefined : spawnDedupeKey(caller.callId);
    const runId = dedupeKey && storedRunId("spawn", deps.config.state.postgres.schema, dedupeKey);
    const started = await deps.startTurn(turn, { dedupeKey, runId });
    await deps.subagents.prepared(started.runId).catch((err: unknown) => {
      throw notPrepared(err, started);
    });
    return accepted({ runId: started.runId, childSessionKey: started.sessionKey }, model);
  },
});

/** The tool's answer when the child's entry or record could not be stored: not accepted; its stored spawn runs at the next start. */
function notPrepared(err: unknown, child: { runId: string; sessionKey: string }): ToolFailure {
  const why = err instanceof Error ? err.message : String(err);
  return new ToolFailure(
    "error",
    `the sub-agent was not started: its session or record could not be stored (${why}); its spawn is kept and runs when the gateway next starts`,
    { runId: child.runId, childSessionKey: child.sessionKey },
  );
}

/** The tool's answer for a started child. */
function accepted(child: { runId: string; childSessionKey: string }, model: ModelChoice | undefined) {
  return {
    status: "accepted",
    runId: child.runId,
    childSessionKey: child.childSessionKey,
    ...(model && { model: `${model.provider}/${model.model}` }),
  };
}
