import { z } from "zod";
import { isFinalStatus } from "../../agents/run-registry.js";
import type { GatewayCore } from "../gateway-core.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";
import type { RunReadCore } from "./read-core.js";

/**
 * `agent`: stores a turn in a session's inbox (default: the agent's main session) and acks with the
 * runId once it is on disk; `agent.wait` waits for its end. Replies stay internal unless `deliver`
 * is true, in which case they go to the session's last route through the delivery gate.
 */
export const agentRun = defineMethod({
  name: "agent",
  params: z.strictObject({
    message: z.string().refine((m) => m.trim() !== "", "message required"),
    sessionKey: z.string().trim().min(1).optional(),
    agentId: z.string().trim().min(1).optional(),
    idempotencyKey: z.string().trim().min(1).max(200).optional(),
    deliver: z.boolean().default(false),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .optional(),
    extraSystemPrompt: z.string().max(20_000).optional(),
  }),
  async handle(core, p) {
    const { key, route } = await targetOf(core, p);
    // Stored in the session's inbox before the ack, so a crash replays it; a repeated idempotencyKey runs nothing.
    const started = await core.startTurn(
      {
        source: "client",
        sessionKey: key,
        text: p.message,
        owner: true,
        provenance: { kind: "system" },
        input: {
          ...(route && { deliver: route }),
          ...(p.timeoutSeconds && { timeoutMs: p.timeoutSeconds * 1000 }),
          ...(p.extraSystemPrompt && { extraSystemPrompt: p.extraSystemPrompt }),
        },
      },
      { dedupeKey: p.idempotencyKey && `client:${p.idempotencyKey}`, runId: p.idempotencyKey },
    );
    const { runId, sessionKey } = started;
    const duplicate = started.status !== "new" && { duplicate: true };
    return { runId, sessionKey, status: "accepted", acceptedAt: core.now(), ...duplicate };
  },
});

/**
 * The session an `agent` call runs in (its key, or the agent's main session) and, with `deliver`,
 * the session's last route; a bad agent id, a mismatched key or no route yet is INVALID_REQUEST.
 */
async function targetOf(core: GatewayCore, p: { agentId?: string; sessionKey?: string; deliver: boolean }) {
  const agentId = p.agentId?.toLowerCase();
  if (agentId && !core.agentIds().includes(agentId)) {
    throw new GatewayError(
      GatewayErrorCodes.INVALID_REQUEST,
      `unknown agent id "${p.agentId}" (agents: ${core.agentIds().join(", ")})`,
    );
  }
  const { parsed, agentId: keyAgent } = core.parseKey(p.sessionKey ?? core.mainKeyOf(agentId ?? core.defaultAgentId()));
  if (agentId && agentId !== keyAgent) {
    throw new GatewayError(
      GatewayErrorCodes.INVALID_REQUEST,
      `agent "${agentId}" does not match session key agent "${keyAgent}"`,
    );
  }
  const { store } = await core.sessions.forAgent(keyAgent);
  const route = p.deliver ? core.lastRoute(store.get(parsed.key)) : undefined;
  if (p.deliver && !route)
    throw new GatewayError(
      GatewayErrorCodes.INVALID_REQUEST,
      `deliver: ${parsed.key} has no last route yet (nobody wrote to it from a channel)`,
    );
  return { key: parsed.key, route };
}

/**
 * `agent.wait`: waits on the server for a run to end (callable again after a reconnect) and
 * returns the run's own final text. A timeout always carries `error`; the run goes on. On
 * PostgreSQL a run this gateway does not know is answered from its stored end (it ended on the
 * gateway that owned the schema before), or waited for when an inbox holds it to run.
 */
export const agentWait = defineMethod({
  name: "agent.wait",
  params: z.strictObject({
    runId: z.string().min(1),
    timeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
  }),
  async handle(core: RunReadCore, p) {
    const known = await core.runs.find(p.runId).catch((err: unknown) => {
      throw new GatewayError(GatewayErrorCodes.UNAVAILABLE, `run ${p.runId} not looked up: ${(err as Error).message}`);
    });
    if (!known)
      throw new GatewayError(
        GatewayErrorCodes.NOT_FOUND,
        `unknown run ${p.runId} (runs are kept 10 minutes after they end; on PostgreSQL as long as the inbox's handled keys, 7 days)`,
      );
    const run = isFinalStatus(known.status) ? known : await core.runs.waitFor(p.runId, p.timeoutMs);
    if (!run) {
      const current = core.runs.get(p.runId) ?? known;
      return {
        runId: p.runId,
        status: "timeout",
        error: `run still ${current.status} after ${p.timeoutMs} ms; it goes on, call agent.wait again`,
        startedAt: current.startedAt,
      };
    }
    return run;
  },
});

/** `agents.list`: the configured agents. */
export const agentsList = defineMethod({
  name: "agents.list",
  params: z.strictObject({}),
  async handle(core) {
    const defaultId = core.defaultAgentId();
    const agents = core.agentIds().map((id) => {
      const entry = core.config.agents.list.find((agent) => agent.id === id);
      return {
        id,
        name: entry?.name ?? id,
        default: id === defaultId,
        model: entry?.model ?? core.config.agents.defaults.model,
      };
    });
    return { agents };
  },
});
