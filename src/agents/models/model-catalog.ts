import type { Config } from "../../config/index.js";
import type { ModelCatalog, ModelCatalogEntry } from "../../sessions/model-selection.js";
import { parseModelRef, resolveAlias } from "./model-ref.js";

/** The model every catalog holds: the built-in offline one. */
const OFFLINE_DEFAULT_REF = "offline/echo";

/**
 * The models `/new <model>` can pick: `offline/echo`, the default and per-agent models, and every
 * alias target, each once (in that order), with the alias names that point to it.
 */
export function buildModelCatalog(config: Config): ModelCatalog {
  const aliases = config.models.aliases;
  const refs = [
    OFFLINE_DEFAULT_REF,
    config.agents.defaults.model,
    ...config.agents.list.flatMap((agent) => (agent.model ? [agent.model] : [])),
    ...Object.values(aliases),
  ];
  const entries = new Map<string, { provider: string; model: string; aliases: string[] }>();
  for (const ref of refs) {
    const parsed = parseModelRef(resolveAlias(ref, aliases));
    if (!parsed) continue;
    const id = `${parsed.provider}/${parsed.model}`;
    if (!entries.has(id)) entries.set(id, { ...parsed, aliases: [] });
  }
  for (const [name, target] of Object.entries(aliases)) {
    const parsed = parseModelRef(target);
    if (parsed) entries.get(`${parsed.provider}/${parsed.model}`)?.aliases.push(name);
  }
  return {
    entries: [...entries.values()].map(
      ({ provider, model, aliases: names }): ModelCatalogEntry => ({
        provider,
        model,
        ...(names.length > 0 && { aliases: names }),
      }),
    ),
  };
}
