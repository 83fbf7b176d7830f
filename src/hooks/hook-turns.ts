import type { StoredTurn } from "../agents/stored-turn.js";
import type { HooksConfig } from "../config/schema/automation.js";
import type { AutomationDeps } from "../cron/run-announced-turn.js";
import { parseDeliveryTarget } from "../delivery/delivery-target.js";
import { formatSessionKey } from "../routing/session-key.js";
import { HookAgentRequestSchema, HookWakeRequestSchema } from "./hook-request.js";
import { HookError, checkedField, invalidBody } from "./hook-error.js";
import type { HookTurnInput } from "./hook-runner.js";

/** What turning a hook body into a turn needs. */
export interface HookTurnDeps extends Pick<AutomationDeps, "parseKey" | "mainKeyOf" | "targetsOf"> {
  config: HooksConfig;
  agentIds: () => string[];
  defaultAgentId: () => string;
  resolveModelRef: (ref: string) => string;
  newId: () => string;
}

/** A checked hook request: its turn as the inbox stores it, and its idempotency key. */
export interface HookTurn {
  idempotencyKey: string | undefined;
  turn: StoredTurn;
}

/** Provenance of every hook turn; `label` is the request's `name`. */
const hookProvenance = (label: string | undefined) => ({
  kind: "system" as const,
  channel: "hook",
  ...(label && { label }),
});

/** A hook turn to store: whoever holds the hook token is an outside system, not an owner (its tools reach only what it spawned). */
function hookTurn(sessionKey: string, text: string, input: HookTurnInput, label?: string) {
  return {
    source: "hook" as const,
    sessionKey,
    text,
    owner: false,
    provenance: hookProvenance(label),
    input: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
  };
}

/** The agent a hook names (or the default), if it exists and hooks may use it. */
function agentOf(deps: HookTurnDeps, requested: string | undefined): string {
  const agentId = requested ?? deps.defaultAgentId();
  if (!deps.agentIds().includes(agentId))
    throw new HookError("NOT_FOUND", `unknown agent "${agentId}" (agents: ${deps.agentIds().join(", ")})`, "agentId");
  const allowed = deps.config.allowedAgentIds;
  if (allowed.length > 0 && !allowed.includes(agentId))
    throw new HookError("FORBIDDEN", `agent "${agentId}" is not in hooks.allowedAgentIds`, "agentId");
  return agentId;
}

/** The session a `/agent` hook runs in: the key it asks for (if allowed), else a new `hook:<uuid>` session. */
function hookSession(deps: HookTurnDeps, sessionKey: string | undefined, agentId: string | undefined) {
  if (sessionKey !== undefined && !deps.config.allowRequestSessionKey) {
    throw new HookError(
      "INVALID_REQUEST",
      "sessionKey: not allowed (set hooks.allowRequestSessionKey to true to let hooks choose their session)",
      "sessionKey",
    );
  }
  const requested = sessionKey === undefined ? undefined : checkedField("sessionKey", () => deps.parseKey(sessionKey));
  // A requested key names its agent; agentId, when also given, must agree with it.
  const agent = agentOf(deps, agentId ?? requested?.agentId);
  if (requested && requested.agentId !== agent)
    throw new HookError(
      "INVALID_REQUEST",
      `sessionKey: belongs to agent "${requested.agentId}", not "${agent}"`,
      "sessionKey",
    );
  if (requested) return { key: requested.parsed.key, isolated: false };
  const key = deps.parseKey(formatSessionKey({ kind: "hook", agentId: agent, id: deps.newId() })).parsed.key;
  return { key, isolated: true };
}

/** `POST <path>/agent`: every field checked (session, agent, target, model) before anything runs. */
export function agentHookTurn(deps: HookTurnDeps, body: unknown): HookTurn {
  const parsed = HookAgentRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidBody(parsed.error.issues);
  const request = parsed.data;
  const session = hookSession(deps, request.sessionKey, request.agentId);
  if (request.deliver && request.to.toLowerCase() !== "last")
    checkedField("to", () => parseDeliveryTarget(request.to, deps.targetsOf, { running: true }));
  const model = request.model;
  const label = request.name ? `[${request.name}] ` : "";
  const input = {
    isolated: session.isolated,
    model: model === undefined ? undefined : checkedField("model", () => deps.resolveModelRef(model)),
    timeoutMs: request.timeoutSeconds === undefined ? undefined : request.timeoutSeconds * 1000,
    announceTo: request.deliver ? request.to : undefined,
  };
  return {
    idempotencyKey: request.idempotencyKey,
    turn: hookTurn(session.key, `${label}${request.message}`, input, request.name),
  };
}

/** `POST <path>/wake`: a system line in the agent's main session. */
export function wakeHookTurn(deps: HookTurnDeps, body: unknown): HookTurn {
  const parsed = HookWakeRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidBody(parsed.error.issues);
  const agentId = agentOf(deps, parsed.data.agentId);
  const key = deps.parseKey(deps.mainKeyOf(agentId)).parsed.key;
  const input = { isolated: false, announceTo: parsed.data.deliver ? "last" : undefined };
  return { idempotencyKey: parsed.data.idempotencyKey, turn: hookTurn(key, `System: ${parsed.data.text}`, input) };
}
