import { type ToolSet, tool } from "ai";
import { callIdOf } from "../agents/recorded-tools.js";
import type { z } from "zod";
import type { ToolDeps } from "./tool-deps.js";
import type { ToolCaller, ToolDefinition } from "./tool-definition.js";
import { type ToolAudience, toolPermitted } from "./tool-policy.js";
import { SESSION_TOOLS, SUBAGENT_DENIED, invokeTool, toolInputSchema } from "./tool-registry.js";
import { FILE_TOOLS } from "./workspace/file-tools.js";

/** The tools this gateway defines itself: session tools, then the workspace file tools when agents have workspaces. */
function builtInTools(deps: Pick<ToolDeps, "workspaceOf">): ToolDefinition<z.ZodType, ToolDeps>[] {
  return [...SESSION_TOOLS, ...(deps.workspaceOf ? (FILE_TOOLS as ToolDefinition<z.ZodType, ToolDeps>[]) : [])];
}

function audienceOf(deps: ToolDeps, caller: Pick<ToolCaller, "agentId" | "sessionKey" | "owner">): ToolAudience {
  const owner = caller.owner === true;
  if (caller.sessionKey?.kind !== "subagent") return { agentId: caller.agentId, owner };
  return { agentId: caller.agentId, owner, subagent: { parentAgentId: deps.parentAgentOf?.(caller.sessionKey.key) } };
}

/**
 * Every tool a run may use, after the tool policy: session tools, workspace file tools and the
 * connected MCP servers' tools (`<server>__<tool>`), bound to the caller.
 */
export function agentTools(deps: ToolDeps, caller: ToolCaller): ToolSet {
  const audience = audienceOf(deps, caller);
  const permitted = (name: string) => toolPermitted(deps.config, audience, name, SUBAGENT_DENIED);
  const set: ToolSet = {};
  for (const definition of builtInTools(deps)) {
    if (!permitted(definition.name)) continue;
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: toolInputSchema(definition.input),
      // The turn's record gives each call its id (stable across a replay), which receiving sides dedupe by.
      execute: (args: unknown, options) => {
        const callId = callIdOf(options);
        return invokeTool(definition, args, callId ? { ...caller, callId } : caller, deps);
      },
    });
  }
  for (const [name, mcpTool] of Object.entries(deps.mcp?.tools() ?? {})) if (permitted(name)) set[name] = mcpTool;
  return set;
}

/** The names of the tools a session of `agentId` (not a sub-agent) gets now, as `agents_list` and `/context` show them. */
export function agentToolNames(deps: ToolDeps, agentId: string): string[] {
  const names = [...builtInTools(deps).map((t) => t.name), ...Object.keys(deps.mcp?.tools() ?? {})];
  return names.filter((name) => toolPermitted(deps.config, { agentId }, name, SUBAGENT_DENIED));
}
