import type { Workspace } from "../../workspace/workspace-port.js";
import type { ToolDeps } from "../tool-deps.js";
import type { ToolCaller } from "../tool-definition.js";
import { ToolFailure } from "../tool-definition.js";

/** The workspace of the caller's agent, written as its session's (its partition fences the writes); a tool error when this gateway has none for it. */
export function workspaceOf(deps: ToolDeps, caller: ToolCaller): Workspace {
  const dir = deps.workspaceOf?.(caller.agentId, caller.sessionKey?.key);
  if (!dir) throw new ToolFailure("error", `agent "${caller.agentId}" has no workspace configured.`);
  return dir;
}

/** The largest file the file tools read or write (`agents.defaults.workspace.maxFileBytes`). */
export function maxFileBytes(deps: ToolDeps): number {
  return deps.config.agents.defaults.workspace.maxFileBytes;
}
