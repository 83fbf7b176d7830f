import path from "node:path";
import { createLocalWorkspace } from "../../src/workspace/local-workspace.js";
import { runWorkspaceContract } from "../contracts/workspace-contract.js";

runWorkspaceContract({
  name: "local folder",
  open: async (dir) => ({
    workspaces: (agentId) => createLocalWorkspace(path.join(dir, agentId)),
    close: async () => undefined,
  }),
});
