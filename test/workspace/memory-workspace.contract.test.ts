import { createMemoryWorkspace } from "../../src/workspace/memory-workspace.js";
import type { Workspace } from "../../src/workspace/workspace-port.js";
import { runWorkspaceContract } from "../contracts/workspace-contract.js";

// Memory keeps nothing across processes: a reopen of the same folder gets the same workspaces back.
const opened = new Map<string, Workspace>();

runWorkspaceContract({
  name: "memory",
  open: async (dir) => ({
    workspaces: (agentId) => {
      const key = `${dir}\n${agentId}`;
      const workspace = opened.get(key) ?? createMemoryWorkspace(agentId);
      opened.set(key, workspace);
      return workspace;
    },
    close: async () => undefined,
  }),
});
