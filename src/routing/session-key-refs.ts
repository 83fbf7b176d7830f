import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type KeyContext, parseSessionKey } from "./parse-session-key.js";
import { hasPlatformIds } from "./peer-ids.js";
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

/** Text no key the gateway makes contains: a parent-directory step, a slash, a control character. */
const FOREIGN_TEXT = /\.\.|[/\\]|\p{Cc}/u;

/**
 * Reads a key a person or client names (`cron add --session`, `sessions.patch`, `tools invoke
 * --session`, `chat --session`, a hook's `sessionKey`): it must have one of the shapes the
 * grammar produces (docs/session-keys.md), not the catch-all `other`, no `..`, slash or control
 * character, and platform ids its channel can produce (`hasPlatformIds`; `linkNames`: the
 * `session.identityLinks` names a DM may be keyed by); anything else is {@link notASessionKey},
 * so no stray session is created.
 */
export function requireSessionKey(
  raw: string,
  ctx: KeyContext = {},
  linkNames?: ReadonlySet<string>,
): ParsedSessionKey {
  const parsed = FOREIGN_TEXT.test(raw) ? null : parseSessionKey(raw, ctx);
  if (!parsed || parsed.kind === "other" || !hasPlatformIds(parsed, linkNames)) throw notASessionKey(raw);
  return parsed;
}
