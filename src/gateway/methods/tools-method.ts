import { z } from "zod";
import { SESSION_TOOLS, findTool, invokeTool } from "../../tools/tool-registry.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

/**
 * `tools.invoke`: runs one session tool by name with JSON arguments, as the owner, on behalf of
 * `sessionKey` (default: the default agent's main session). Bad arguments come back as a
 * `{status: "error"}` result, like an agent would see them.
 */
export const toolsInvoke = defineMethod({
  name: "tools.invoke",
  params: z.strictObject({
    tool: z.string().trim().min(1),
    args: z.record(z.string(), z.unknown()).default({}),
    sessionKey: z.string().trim().min(1).optional(),
  }),
  async handle(core, p) {
    const definition = findTool(p.tool);
    if (!definition) throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `unknown tool "${p.tool}" (tools: ${SESSION_TOOLS.map((t) => t.name).join(", ")})`);
    const { parsed, agentId } = core.parseKey(p.sessionKey ?? core.mainKeyOf(core.defaultAgentId()));
    return invokeTool(definition, p.args, { agentId, sessionKey: parsed, sandboxed: false }, core.toolDeps);
  },
});
