import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type ParsedSessionKey, formatSessionKey } from "./session-key.js";

/** The canonical key of an agent's main session: `agent:<agentId>:<mainKey>`. */
export function mainSessionKey(agentId: string, mainKey: string): string {
  return formatSessionKey({ kind: "main", agentId, mainKey });
}

/** The canonical key of a new sub-agent session: `agent:<agentId>:subagent:<id>`. */
export function subagentSessionKey(agentId: string, id: string): string {
  return formatSessionKey({ kind: "subagent", agentId, id });
}

/** The canonical key in lowercase, and for agent keys also without its `agent:<id>:` prefix (`telegram:group:-100`). */
export function sessionKeyForms(key: ParsedSessionKey): string[] {
  const full = key.key.toLowerCase();
  if (!("agentId" in key)) return [full];
  const prefix = `agent:${key.agentId.toLowerCase()}:`;
  return full.startsWith(prefix) ? [full, full.slice(prefix.length)] : [full];
}

/**
 * The one error for text that is not a session key, wherever a key is rejected (code
 * `INVALID_SESSION_KEY`): names the text and shows what a key looks like.
 */
export function notASessionKey(raw: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.INVALID_SESSION_KEY,
    `"${raw}" is not a session key. Keys look like agent:main:telegram:group:-100123; sessions.list shows them.`,
  );
}
