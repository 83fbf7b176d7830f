import { appendFile, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Workspace } from "../../workspace/workspace-port.js";
import { ToolFailure } from "../tool-definition.js";
import { WorkspacePathError, resolveInWorkspace as resolvePath } from "../../workspace/workspace-path.js";

/** The path inside the workspace; a path that leaves it is the tool's `forbidden` answer. */
async function resolveInWorkspace(root: string, relative: string): Promise<string> {
  try {
    return await resolvePath(root, relative);
  } catch (err) {
    if (err instanceof WorkspacePathError) throw new ToolFailure("forbidden", err.message);
    throw err;
  }
}

const LIST_LIMIT = 500;

/** One entry the `list` tool shows. */
interface ListedEntry {
  name: string;
  type: "file" | "folder" | "link";
}

/** What the file tools do to a workspace, by path relative to it; failures are tool errors. */
export interface FileOps {
  /** the text of a file, a tool error when missing or over `limit` bytes */
  read(relative: string, limit: number): Promise<string>;
  /** replaces a file whole (folders created), a tool error when `text` is over `limit` bytes */
  write(relative: string, text: string, limit: number): Promise<void>;
  /** adds `text` at the end (file created); returns the file's new size in bytes */
  append(relative: string, text: string, limit: number): Promise<number>;
  /** replaces a file with `change(its text)` (a tool error when missing, or read or written over `limit` bytes) */
  edit(relative: string, change: (text: string) => string, limit: number): Promise<void>;
  list(relative: string): Promise<{ entries: ListedEntry[]; truncated?: true }>;
}

const missingFile = (relative: string) =>
  new ToolFailure("error", `"${relative}" does not exist; list shows the files.`);
const notFolder = (relative: string) => new ToolFailure("error", `"${relative}" is not a folder of your workspace.`);

/** What goes over the limit: a whole text written, a file an append makes, a file read. */
const OVER = {
  writing: (bytes: number, relative: string) => `writing ${bytes} bytes to "${relative}" is over`,
  appending: (bytes: number, relative: string) => `appending to "${relative}" would make it ${bytes} bytes, over`,
  reading: (bytes: number, relative: string) => `"${relative}" has ${bytes} bytes, over`,
};

/** A tool error when `bytes` is over the file tools' limit. */
function checkSize(bytes: number, relative: string, limit: number, verb: keyof typeof OVER = "writing"): void {
  if (bytes > limit)
    throw new ToolFailure("error", `${OVER[verb](bytes, relative)} the ${limit}-byte limit of the file tools.`);
}

async function readCapped(file: string, relative: string, limit: number): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw missingFile(relative);
  if (!info.isFile()) throw new ToolFailure("error", `"${relative}" is not a file.`);
  checkSize(info.size, relative, limit, "reading");
  return readFile(file, "utf8");
}

/** The file tools on a folder (local backend): paths are checked through symlinks, appends happen in place. */
function folderOps(root: string): FileOps {
  const ops: FileOps = {
    read: async (relative, limit) => readCapped(await resolveInWorkspace(root, relative), relative, limit),
    async write(relative, text, limit) {
      const file = await resolveInWorkspace(root, relative);
      checkSize(Buffer.byteLength(text), relative, limit);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, text, "utf8");
    },
    async append(relative, text, limit) {
      const file = await resolveInWorkspace(root, relative);
      const before = (await stat(file).catch(() => undefined))?.size ?? 0;
      const bytes = before + Buffer.byteLength(text);
      checkSize(bytes, relative, limit, "appending");
      await mkdir(path.dirname(file), { recursive: true });
      await appendFile(file, text, "utf8");
      return bytes;
    },
    async edit(relative, change, limit) {
      // One gateway owns the folder: nobody writes between the read and the write.
      const next = change(await ops.read(relative, limit));
      await ops.write(relative, next, limit);
    },
    async list(relative) {
      const dir = await resolveInWorkspace(root, relative);
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
        throw notFolder(relative);
      });
      const listed = entries.slice(0, LIST_LIMIT).map(
        (e): ListedEntry => ({
          name: e.name,
          type: e.isDirectory() ? "folder" : e.isSymbolicLink() ? "link" : "file",
        }),
      );
      return { entries: listed, ...(entries.length > LIST_LIMIT && { truncated: true as const }) };
    },
  };
  return ops;
}

/** Runs a port call, turning a path that leaves the workspace into the file tools' "forbidden". */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof SwitchboardError && err.code === ErrorCodes.INVALID_ARGUMENT)
      throw new ToolFailure("forbidden", err.message);
    throw err;
  }
}

/** An edit through the port, compare-and-set: a write by another turn in between makes the port read again and `change` run again. */
async function editThroughPort(
  workspace: Workspace,
  relative: string,
  change: (text: string) => string,
  limit: number,
) {
  const changed = await guarded(() =>
    workspace.update(relative, (text) => {
      checkSize(Buffer.byteLength(text), relative, limit, "reading");
      const next = change(text);
      checkSize(Buffer.byteLength(next), relative, limit);
      return next;
    }),
  ).catch((err: unknown) => {
    if (err instanceof SwitchboardError && err.code === ErrorCodes.BUSY) throw new ToolFailure("error", err.message);
    throw err;
  });
  if (changed === undefined) throw missingFile(relative);
}

/** The file tools on any other workspace (PostgreSQL rows, memory), through the port. */
function portOps(workspace: Workspace): FileOps {
  const readCappedText = async (relative: string, limit: number) => {
    const text = await guarded(() => workspace.read(relative));
    if (text === undefined) throw missingFile(relative);
    checkSize(Buffer.byteLength(text), relative, limit, "reading");
    return text;
  };
  return {
    read: readCappedText,
    async write(relative, text, limit) {
      checkSize(Buffer.byteLength(text), relative, limit);
      await guarded(() => workspace.write(relative, text));
    },
    async append(relative, text, limit) {
      // One step on the storage (PostgreSQL: one statement), so appends by turns on two gateways both land.
      const appended = await guarded(() => workspace.append(relative, text, limit));
      if (!appended.written) checkSize(appended.bytes, relative, limit, "appending");
      return appended.bytes;
    },
    edit: (relative, change, limit) => editThroughPort(workspace, relative, change, limit),
    async list(relative) {
      const entries = await guarded(() => workspace.list(relative));
      if (entries.length === 0 && relative.trim() !== "." && relative.trim() !== "") throw notFolder(relative);
      const listed = entries.slice(0, LIST_LIMIT).map((e): ListedEntry => ({ name: e.name, type: e.type }));
      return { entries: listed, ...(entries.length > LIST_LIMIT && { truncated: true as const }) };
    },
  };
}

/** The file operations on `workspace`: in its folder when it has one, else through the port. */
export const fileOpsOf = (workspace: Workspace): FileOps =>
  workspace.folder ? folderOps(workspace.folder) : portOps(workspace);
