import type { Config } from "../config/schema/index.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { mainSessionKey } from "../routing/session-key-refs.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import type { ToolDeps } from "./tool-deps.js";
import { type ToolCaller, ToolFailure } from "./tool-definition.js";

/** A session a tool may act on. */
export interface ResolvedTarget {
  parsed: ParsedSessionKey;
  agentId: string;
  entry: SessionEntry;
  /** the key as the caller should see it (`main` for its own main session) */
  displayKey: string;
}

function agentOf(parsed: ParsedSessionKey, fallback: string): string {
  return "agentId" in parsed ? parsed.agentId : fallback;
}

function globToRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
    "i",
  );
}

/** Whether sessions of agent `from` may reach sessions of agent `to` (`tools.agentToAgent`). */
export function agentToAgentAllowed(config: Pick<Config, "tools">, from: string, to: string): boolean {
  if (from === to) return true;
  const { enabled, allow } = config.tools.agentToAgent;
  if (!enabled) return false;
  const matches = (id: string) =>
    allow.length === 0 || allow.some((p) => (p.includes("*") ? globToRegExp(p).test(id) : p === id));
  return matches(from) && matches(to);
}

/** Whether the caller's session runs sandboxed (`agents.*.sandbox.mode`). */
export function isSandboxed(
  config: Pick<Config, "agents">,
  agentId: string,
  sessionKey: ParsedSessionKey | undefined,
): boolean {
  const own = config.agents.list.find((agent) => agent.id === agentId)?.sandbox?.mode;
  const mode = own ?? config.agents.defaults.sandbox.mode;
  if (mode === "all") return true;
  // Under scope "global" the global session is every chat's main one.
  return mode === "non-main" && sessionKey !== undefined && sessionKey.kind !== "main" && sessionKey.kind !== "global";
}

/**
 * The one visibility rule every session tool uses: a caller sees its own session; a turn limited
 * to `self` sees nothing else; one limited to `spawned` (a guest's turn, or a sandboxed caller with
 * `sessionToolsVisibility: "spawned"`) sees only the sessions it spawned; another agent's sessions
 * need `tools.agentToAgent`. `owner` is the agent whose store holds the row (the
 * key `global` does not name one).
 */
export function canSee(
  config: Pick<Config, "agents" | "tools" | "session">,
  caller: ToolCaller,
  parsed: ParsedSessionKey,
  entry: SessionEntry,
  owner: string,
): boolean {
  if (parsed.kind === "unknown" || (parsed.kind === "global" && config.session.scope !== "global")) return false;
  const target = agentOf(parsed, owner);
  if (caller.sessionKey?.key === parsed.key && (parsed.kind !== "global" || target === caller.agentId)) return true;
  if (!agentToAgentAllowed(config, caller.agentId, target)) return false;
  const own = config.agents.list.find((agent) => agent.id === caller.agentId)?.sandbox?.sessionToolsVisibility;
  const visibility = own ?? config.agents.defaults.sandbox.sessionToolsVisibility;
  const restricted =
    caller.sandboxed &&
    visibility === "spawned" &&
    caller.sessionKey !== undefined &&
    caller.sessionKey.kind !== "subagent";
  // Who triggered the turn limits it too (tools.sessions.visibility): guests reach what they spawned.
  const reach = caller.visibility ?? "agent";
  if (reach === "self") return false;
  if (!restricted && reach !== "spawned") return true;
  return caller.sessionKey !== undefined && entry.spawnedBy === caller.sessionKey.key;
}

/** `main` for the caller's own main session, the canonical key otherwise. */
export function displayKeyOf(deps: Pick<ToolDeps, "keys">, caller: ToolCaller, key: string, owner: string): string {
  const main = deps.keys.scope === "global" ? "global" : mainSessionKey(caller.agentId, deps.keys.mainKey);
  return key === main && owner === caller.agentId ? "main" : key;
}

function unknownSession(ref: string): ToolFailure {
  return new ToolFailure("error", `Unknown session '${ref}'. Use sessions_list to see the keys you can reach.`);
}

/**
 * Resolves a session reference: an exact sessionId first, then a key (any spelling; `main` is the
 * caller's own agent's main session). A session the caller may not see gets the same error as a
 * missing one.
 */
export async function resolveTarget(deps: ToolDeps, caller: ToolCaller, rawRef: string): Promise<ResolvedTarget> {
  const ref = rawRef.trim();
  for (const agentId of deps.agentIds()) {
    const { store } = await deps.sessions.forAgent(agentId);
    const found = store.findBySessionId(ref);
    if (found && canSee(deps.config, caller, found.parsed, found.entry, agentId)) {
      return {
        parsed: found.parsed,
        agentId: agentOf(found.parsed, agentId),
        entry: found.entry,
        displayKey: displayKeyOf(deps, caller, found.key, agentId),
      };
    }
  }
  const parsed = parseSessionKey(ref, { ...deps.keys, defaultAgentId: caller.agentId });
  if (!parsed || parsed.kind === "unknown" || (parsed.kind === "global" && deps.keys.scope !== "global"))
    throw unknownSession(ref);
  const agentId = agentOf(parsed, caller.agentId);
  if (!deps.agentIds().includes(agentId)) throw unknownSession(ref);
  // With several owners the store holds this core's partitions only: another's session is read from its row.
  const entry =
    (await deps.sessions.forAgent(agentId)).store.get(parsed.key) ??
    (await deps.sessionElsewhere?.(agentId, parsed.key));
  if (!entry || !canSee(deps.config, caller, parsed, entry, agentId)) throw unknownSession(ref);
  return { parsed, agentId, entry, displayKey: displayKeyOf(deps, caller, parsed.key, agentId) };
}
