import { appendFile, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { writeFileAtomic } from "../state/atomic-json-file.js";
import { WorkspacePathError, resolveInWorkspace } from "./workspace-path.js";
import {
  type AppendResult,
  type Workspace,
  type WorkspaceEntry,
  byName,
  updateAsOwner,
  workspaceFilePath,
  workspacePath,
} from "./workspace-port.js";

/** The path behind `relative`, also through symlinks never outside `dir` (the file tools' rule). */
async function inside(dir: string, relative: string): Promise<string> {
  try {
    return await resolveInWorkspace(dir, relative);
  } catch (err) {
    if (err instanceof WorkspacePathError) throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, err.message);
    throw err;
  }
}

/** True when the workspace folder exists (a workspace nobody wrote to yet has none). */
const exists = (dir: string) =>
  stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );

const missing = (err: unknown) => ["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "");

/** An append in place (one gateway owns a folder): the file tools' append on the local backend. */
async function appendInPlace(root: string, given: string, text: string, maxBytes: number): Promise<AppendResult> {
  const relative = workspaceFilePath(given);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const file = await inside(root, relative);
  const bytes = ((await stat(file).catch(() => undefined))?.size ?? 0) + Buffer.byteLength(text);
  if (bytes > maxBytes) return { bytes, written: false };
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, text, "utf8");
  return { bytes, written: true };
}

/** Creates a file unless it exists ("wx" fails on an existing one: the owner's edits are never replaced). */
async function createInPlace(root: string, given: string, text: string): Promise<boolean> {
  const relative = workspaceFilePath(given);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const file = await inside(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  return writeFile(file, text, { encoding: "utf8", flag: "wx" }).then(
    () => true,
    (err: unknown) => ((err as NodeJS.ErrnoException).code === "EEXIST" ? false : Promise.reject(err)),
  );
}

/** The local backend's workspace: the folder `dir` is the truth (the owner edits it with any editor). */
export function createLocalWorkspace(dir: string): Workspace {
  const root = path.resolve(dir);
  const workspace: Workspace = {
    location: root,
    folder: root,
    async read(given) {
      const relative = workspaceFilePath(given);
      if (!(await exists(root))) return undefined;
      const file = await inside(root, relative);
      return readFile(file, "utf8").catch((err: unknown) => (missing(err) ? undefined : Promise.reject(err)));
    },
    async write(given, text) {
      // Atomic (temp file, fsync, rename): a crash leaves the old file or the new one, never half of it.
      const relative = workspaceFilePath(given);
      await mkdir(root, { recursive: true, mode: 0o700 });
      await writeFileAtomic(await inside(root, relative), text);
    },
    create: (given, text) => createInPlace(root, given, text),
    append: (given, text, maxBytes) => appendInPlace(root, given, text, maxBytes),
    update: (given, change) => updateAsOwner(workspace, given, change),
    async list(given = ".") {
      const relative = workspacePath(given);
      if (!(await exists(root))) return [];
      const folder = await inside(root, relative);
      const entries = await readdir(folder, { withFileTypes: true }).catch((err: unknown) =>
        missing(err) ? [] : Promise.reject(err),
      );
      const listed: WorkspaceEntry[] = [];
      for (const entry of entries) {
        if (entry.isDirectory()) listed.push({ name: entry.name, type: "folder" });
        else if (entry.isFile() || entry.isSymbolicLink()) {
          const info = await stat(path.join(folder, entry.name)).catch(() => undefined);
          if (info?.isFile()) listed.push({ name: entry.name, type: "file", bytes: info.size });
        }
      }
      return listed.sort(byName);
    },
  };
  return workspace;
}
