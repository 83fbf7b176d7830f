import { z } from "zod";
import type { SectionSchemas } from "./sections.js";

type Sections = z.infer<z.ZodObject<SectionSchemas>>;

/** Every model reference is "provider/model" or an alias of `models.aliases`. */
function checkModels(config: Sections, ctx: z.RefinementCtx): void {
  const aliases = Object.keys(config.models.aliases);
  const checkModel = (model: string | undefined, path: PropertyKey[]) => {
    if (model === undefined || model.includes("/") || aliases.includes(model)) return;
    const known = aliases.length ? `aliases: ${aliases.join(", ")}` : "no aliases are defined in models.aliases";
    ctx.addIssue({ code: "custom", path, message: `"${model}" is neither "provider/model" nor an alias (${known})` });
  };
  checkModel(config.agents.defaults.model, ["agents", "defaults", "model"]);
  for (const [index, agent] of config.agents.list.entries())
    checkModel(agent.model, ["agents", "list", index, "model"]);
}

/** A hook token only runs hooks, so it must not also open the gateway. */
function checkHookToken(config: Sections, ctx: z.RefinementCtx): void {
  if (config.hooks.token === undefined || config.hooks.token !== config.gateway.auth.token) return;
  ctx.addIssue({
    code: "custom",
    path: ["hooks", "token"],
    message: "must differ from gateway.auth.token (a hook token only runs hooks)",
  });
}

/** Bindings and `subagents.allowAgents` name agents of `agents.list` (when there is a list). */
function checkAgentReferences(config: Sections, ctx: z.RefinementCtx): void {
  const ids = config.agents.list.map((agent) => agent.id);
  if (ids.length === 0) return;
  const known = `known agents: ${ids.join(", ")}`;
  config.bindings.forEach((binding, index) => {
    if (ids.includes(binding.agentId)) return;
    ctx.addIssue({
      code: "custom",
      path: ["bindings", index, "agentId"],
      message: `unknown agent "${binding.agentId}" (${known}); add it to agents.list`,
    });
  });
  config.agents.list.forEach((agent, index) => {
    agent.subagents?.allowAgents?.forEach((id, j) => {
      if (id === "*" || ids.includes(id.toLowerCase())) return;
      ctx.addIssue({
        code: "custom",
        path: ["agents", "list", index, "subagents", "allowAgents", j],
        message: `unknown agent "${id}" (${known}, or "*" for any)`,
      });
    });
  });
}

/** `cluster.owners: "many"` shares a PostgreSQL schema: the local backend is refused. */
function checkOwners(config: Sections, ctx: z.RefinementCtx): void {
  if (config.cluster.owners !== "many") return;
  const path = ["cluster", "owners"];
  if (config.state.backend !== "postgres")
    ctx.addIssue({
      code: "custom",
      path,
      message:
        '"many" needs state.backend "postgres" (gateways share partitions of one schema): set state.backend to "postgres", or cluster.owners to "one"',
    });
}

/**
 * The whole `switchboard.json5` from its sections' schemas: one strict object (an unknown section is
 * named with a did-you-mean) and the checks that span sections.
 */
export function configSchemaOf(sections: SectionSchemas) {
  return z.strictObject(sections).superRefine((config, ctx) => {
    checkModels(config, ctx);
    checkHookToken(config, ctx);
    checkAgentReferences(config, ctx);
    checkOwners(config, ctx);
  });
}
