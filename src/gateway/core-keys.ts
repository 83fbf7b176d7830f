import type { Config } from "../config/schema/index.js";
import { configuredAgentIds } from "../routing/routing-table.js";
import { createSessionKeyContext } from "../routing/session-key-context.js";
import { mainSessionKey } from "../routing/session-key-refs.js";

/** The gateway's session-key context (built in routing/, as the pipeline's is) and the agent ids it knows. */
export function createCoreKeys(config: Config) {
  const sessionKeys = createSessionKeyContext(config);
  const keyContext = sessionKeys.keys;
  return {
    keyContext,
    agentIds: (): string[] => configuredAgentIds(config),
    parseKey: sessionKeys.parse,
    agentOfKey: sessionKeys.agentOf,
    mainKeyOf: (agentId: string) => mainSessionKey(agentId, config.session.mainKey),
    defaultAgentId: () => keyContext.defaultAgentId,
  };
}

/** The gateway's session-key context and parsers. */
export type CoreKeys = ReturnType<typeof createCoreKeys>;
