import { type Workspace, entriesIn, updateAsOwner, workspaceFilePath, workspacePath } from "./workspace-port.js";

/** A workspace in memory (unit tests). */
export function createMemoryWorkspace(name = "memory"): Workspace {
  const files = new Map<string, string>();
  const workspace: Workspace = {
    location: `memory:${name}`,
    read: async (given) => files.get(workspaceFilePath(given)),
    async write(given, text) {
      files.set(workspaceFilePath(given), text);
    },
    async create(given, text) {
      const file = workspaceFilePath(given);
      if (files.has(file)) return false;
      files.set(file, text);
      return true;
    },
    async append(given, text, maxBytes) {
      const file = workspaceFilePath(given);
      const next = (files.get(file) ?? "") + text;
      const bytes = Buffer.byteLength(next);
      if (bytes <= maxBytes) files.set(file, next);
      return { bytes, written: bytes <= maxBytes };
    },
    update: (given, change) => updateAsOwner(workspace, given, change),
    list: async (given = ".") =>
      entriesIn(
        [...files].map(([file, text]) => [file, Buffer.byteLength(text)]),
        workspacePath(given),
      ),
  };
  return workspace;
}
