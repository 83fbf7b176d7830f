import { z } from "zod";
import { SESSION_TOOLS, argumentProblems, findTool, invokeTool } from "../../tools/tool-registry.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

/**
 * `tools.invoke`: runs one session tool by name with JSON arguments, as the owner, on behalf of
 * `sessionKey` (default: the default agent's main session). Invalid arguments are a request error
 * (INVALID_REQUEST, HTTP 400); a tool that ran answers with its result, whatever its `status`.
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
    if (!definition)
      throw new GatewayError(
        GatewayErrorCodes.NOT_FOUND,
        `unknown tool "${p.tool}" (tools: ${SESSION_TOOLS.map((t) => t.name).join(", ")})`,
      );
    const problems = argumentProblems(definition, p.args);
    if (problems) throw new GatewayError(GatewayErrorCodes.INVALID_REQUEST, problems);
    const { parsed, agentId } = core.parseKey(p.sessionKey ?? core.mainKeyOf(core.defaultAgentId()));
    return invokeTool(
      definition,
      p.args,
      { agentId, sessionKey: parsed, sandboxed: false, owner: true, visibility: "agent" },
      core.toolDeps,
    );
  },
});
