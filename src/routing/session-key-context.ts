import type { Config } from "../config/schema/index.js";
import { type KeyContext, parseSessionKey } from "./parse-session-key.js";
import { resolveDefaultAgentId } from "./resolve-route.js";
import type { ParsedSessionKey } from "./session-key.js";
import { requireSessionKey } from "./session-key-refs.js";

/** A session key read against the config: its canonical form and the agent that owns it. */
export interface KeyedSession {
  parsed: ParsedSessionKey;
  agentId: string;
}

/** How keys are read under one config; the one place the gateway and the inbound pipeline get it from. */
export interface SessionKeyContext {
  /** the default agent, `session.mainKey` and `session.scope` the parser needs */
  keys: Required<KeyContext>;
  /** A key a client names, in any spelling, to its canonical form and owning agent; INVALID_SESSION_KEY when no grammar makes it. */
  parse(raw: string): KeyedSession;
  /** The agent owning a canonical key (a run's), without throwing: the default agent for keys of none. */
  agentOf(key: string): string;
}

/** Builds the {@link SessionKeyContext} of a config. */
export function createSessionKeyContext(config: Pick<Config, "agents" | "session">): SessionKeyContext {
  const keys = {
    defaultAgentId: resolveDefaultAgentId(config),
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  };
  // A DM linked by `session.identityLinks` is keyed by the person's name, lowercased (identity-links.ts).
  const linkNames = new Set(
    Object.keys(config.session.identityLinks ?? {})
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const agentOfParsed = (parsed: ParsedSessionKey | null): string =>
    parsed && "agentId" in parsed ? parsed.agentId : keys.defaultAgentId;
  return {
    keys,
    parse(raw) {
      const parsed = requireSessionKey(raw, keys, linkNames);
      return { parsed, agentId: agentOfParsed(parsed) };
    },
    agentOf: (key) => agentOfParsed(parseSessionKey(key, keys)),
  };
}
