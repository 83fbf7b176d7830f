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
  list(relative: string): Promise<{ entries: ListedEntry[]; truncated?: true }>;
}

const missingFile = (relative: string) =>
  new ToolFailure("error", `"${relative}" does not exist; list shows the files.`);
const notFolder = (relative: string) => new ToolFailure("error", `"${relative}" is not a folder of your workspace.`);

/** A tool error when `bytes` is over the file tools' limit. */
function checkSize(bytes: number, relative: string, limit: number, verb = "writing"): void {
  if (bytes > limit)
    throw new ToolFailure(
      "error",
      verb === "writing"
        ? `writing ${bytes} bytes to "${relative}" is over the ${limit}-byte limit of the file tools.`
        : `appending to "${relative}" would make it ${bytes} bytes, over the ${limit}-byte limit of the file tools.`,
    );
}

async function readCapped(file: string, relative: string, limit: number): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw missingFile(relative);
  if (!info.isFile()) throw new ToolFailure("error", `"${relative}" is not a file.`);
  if (info.size > limit)
    throw new ToolFailure(
      "error",
      `"${relative}" has ${info.size} bytes, over the ${limit}-byte limit of the file tools.`,
    );
  return readFile(file, "utf8");
}

/** The file tools on a folder (local backend): paths are checked through symlinks, appends happen in place. */
function folderOps(root: string): FileOps {
  return {
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

/** The file tools on any other workspace (PostgreSQL rows, memory), through the port. */
function portOps(workspace: Workspace): FileOps {
  const readCappedText = async (relative: string, limit: number) => {
    const text = await guarded(() => workspace.read(relative));
    if (text === undefined) throw missingFile(relative);
    const bytes = Buffer.byteLength(text);
    if (bytes > limit)
      throw new ToolFailure(
        "error",
        `"${relative}" has ${bytes} bytes, over the ${limit}-byte limit of the file tools.`,
      );
    return text;
  };
  return {
    read: readCappedText,
    async write(relative, text, limit) {
      checkSize(Buffer.byteLength(text), relative, limit);
      await guarded(() => workspace.write(relative, text));
    },
    async append(relative, text, limit) {
      // Read, then write the whole: rows have no in-place append (the agent's turns on one session run one at a time).
      const before = (await guarded(() => workspace.read(relative))) ?? "";
      const bytes = Buffer.byteLength(before) + Buffer.byteLength(text);
      checkSize(bytes, relative, limit, "appending");
      await guarded(() => workspace.write(relative, before + text));
      return bytes;
    },
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
