import { MODEL_PROVIDERS, parseModelRef, resolveAlias } from "../agents/models/model-ref.js";
import type { Config } from "../config/index.js";
import { isLoopback } from "../gateway/request-guard.js";

/**
 * What the schema cannot see but the gateway would refuse or fail on: a model whose provider does
 * not exist, and a non-loopback bind without a token (`token` is the env token, when set).
 */
export function configProblems(config: Config, token: string | undefined): string[] {
  const problems: string[] = [];
  const checkModel = (ref: string | undefined, where: string) => {
    if (ref === undefined) return;
    const provider = parseModelRef(resolveAlias(ref, config.models.aliases))?.provider;
    if (provider !== undefined && !(MODEL_PROVIDERS as readonly string[]).includes(provider)) {
      problems.push(
        `${where}: unknown model provider "${provider}" in "${ref}" (providers: ${MODEL_PROVIDERS.join(", ")})`,
      );
    }
  };
  checkModel(config.agents.defaults.model, "agents.defaults.model");
  for (const [i, agent] of config.agents.list.entries()) checkModel(agent.model, `agents.list[${i}].model`);
  for (const [name, ref] of Object.entries(config.models.aliases)) checkModel(ref, `models.aliases.${name}`);
  if (!isLoopback(config.gateway.bind) && !(config.gateway.auth.token ?? token)) {
    problems.push(
      `gateway.bind: ${config.gateway.bind} is reachable from other machines and the gateway refuses it without a token: set gateway.auth.token (or SWITCHBOARD_GATEWAY_TOKEN), or bind to 127.0.0.1`,
    );
  }
  return problems;
}
