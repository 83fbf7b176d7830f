import type { Config } from "../config/schema/index.js";
import { DEFAULT_AGENT_ID } from "../routing/normalize.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import { resolveDefaultAgentId } from "../routing/resolve-route.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { mainSessionKey, requireSessionKey } from "../routing/session-key-refs.js";

/** The gateway's session-key context: the default agent, the main key and the DM scope, and what it parses. */
export function createCoreKeys(config: Config) {
  const keyContext = {
    defaultAgentId: resolveDefaultAgentId(config),
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  };
  return {
    keyContext,
    agentIds: (): string[] =>
      config.agents.list.length ? config.agents.list.map((agent) => agent.id) : [DEFAULT_AGENT_ID],
    /** A key a client names, in any spelling, to its canonical form and owning agent; INVALID_SESSION_KEY when no grammar makes it. */
    parseKey(raw: string): { parsed: ParsedSessionKey; agentId: string } {
      const parsed = requireSessionKey(raw, keyContext);
      return { parsed, agentId: "agentId" in parsed ? parsed.agentId : keyContext.defaultAgentId };
    },
    /** The agent owning a canonical key (a run's), without throwing: the default agent for keys of none. */
    agentOfKey(key: string): string {
      const parsed = parseSessionKey(key, keyContext);
      return parsed && "agentId" in parsed ? parsed.agentId : keyContext.defaultAgentId;
    },
    mainKeyOf: (agentId: string) => mainSessionKey(agentId, config.session.mainKey),
    defaultAgentId: () => keyContext.defaultAgentId,
  };
}

/** The gateway's session-key context and parsers. */
export type CoreKeys = ReturnType<typeof createCoreKeys>;
