import { type Workspace, entriesIn, workspaceFilePath, workspacePath } from "./workspace-port.js";

/** A workspace in memory (unit tests). */
export function createMemoryWorkspace(name = "memory"): Workspace {
  const files = new Map<string, string>();
  return {
    location: `memory:${name}`,
    read: async (given) => files.get(workspaceFilePath(given)),
    async write(given, text) {
      files.set(workspaceFilePath(given), text);
    },
    list: async (given = ".") =>
      entriesIn(
        [...files].map(([file, text]) => [file, Buffer.byteLength(text)]),
        workspacePath(given),
      ),
  };
}
