/**
 * The workspace port: an agent's files (`AGENTS.md`, `USER.md`, `MEMORY.md`, `memory/*.md`, what the
 * file tools write) by path relative to the workspace, never by a path on this machine's disk.
 * Implementations: the folder (`./local-workspace.ts`, the local backend: the folder is the truth),
 * memory (`./memory-workspace.ts`) and PostgreSQL rows (`../state/postgres/postgres-workspace.ts`);
 * all pass `test/contracts/workspace-contract.ts`.
 */
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../errors.js";

/** One entry of a workspace folder. */
export interface WorkspaceEntry {
  /** the entry's name in its folder */
  name: string;
  type: "file" | "folder";
  /** a file's size in bytes */
  bytes?: number;
}

/** One agent's workspace. */
export interface Workspace {
  /** Where a person finds it (local: the folder; PostgreSQL: schema and agent), for messages. */
  readonly location: string;
  /** The folder on this machine when the workspace is one (local backend): the file tools then work in it directly. */
  readonly folder?: string;
  /** The text of file `file`, or undefined when there is none. */
  read(file: string): Promise<string | undefined>;
  /** Creates or replaces file `file` whole (never half-written), with any folders it needs. */
  write(file: string, text: string): Promise<void>;
  /**
   * Creates file `file` with `text` only when it does not exist, in one step (a file another writer
   * created just before is never replaced). True when this call created it.
   */
  create(file: string, text: string): Promise<boolean>;
  /**
   * Adds `text` at the end of `file` (created when missing) in one step, so two appends at once
   * both land; nothing is written when the file would grow over `maxBytes`. The file's size after.
   */
  append(file: string, text: string, maxBytes: number): Promise<AppendResult>;
  /**
   * Replaces `file` with `change(its text)`, compare-and-set: when another writer changed it between
   * the read and the write, it is read again and `change` applied again (a `BUSY` error after a few
   * tries). The new text, or undefined when the file is missing (nothing written). `change` may throw: nothing is written.
   */
  update(file: string, change: (text: string) => string): Promise<string | undefined>;
  /** The entries of folder `folder` ("." for the top), sorted by name; empty when it does not exist. */
  list(folder?: string): Promise<WorkspaceEntry[]>;
}

/** What an append did: the file's size in bytes after it (or that it would have had: `written` false, over the limit). */
export interface AppendResult {
  bytes: number;
  written: boolean;
}

/** How often `update` re-reads and re-applies a change another writer overtook before it gives up. */
export const UPDATE_TRIES = 5;

/** The `BUSY` error of an update other writers overtook {@link UPDATE_TRIES} times. */
export function keptChanging(file: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.BUSY,
    `"${file}" kept changing while it was being edited (${UPDATE_TRIES} tries); read it again and retry the edit.`,
  );
}

/**
 * `update` of a workspace one writer owns (a folder of one gateway, memory): read, change, write
 * whole; nobody writes between the read and the write.
 */
export async function updateAsOwner(
  workspace: Pick<Workspace, "read" | "write">,
  file: string,
  change: (text: string) => string,
): Promise<string | undefined> {
  const text = await workspace.read(file);
  if (text === undefined) return undefined;
  const next = change(text);
  await workspace.write(file, next);
  return next;
}

/**
 * Opens the workspace of an agent on the backend's storage; `sessionKey`: the session whose turn
 * writes through it (PostgreSQL fences its writes by that session's partition; none: the writer lease).
 */
export type OpenWorkspace = (agentId: string, sessionKey?: string) => Workspace;

function outside(given: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `${JSON.stringify(given)} is not a path inside the workspace; use a path relative to it, such as "MEMORY.md" or "memory/2026-01-31.md".`,
  );
}

/** `given` as a normalized relative path ("." for the top); INVALID_ARGUMENT when it leaves the workspace. */
export function workspacePath(given: string): string {
  const trimmed = given.trim().replaceAll("\\", "/");
  if (trimmed.includes("\0") || path.posix.isAbsolute(trimmed)) throw outside(given);
  const normal = path.posix.normalize(trimmed === "" ? "." : trimmed).replace(/\/+$/, "");
  if (normal === ".." || normal.startsWith("../")) throw outside(given);
  return normal === "" ? "." : normal;
}

/** A file path: a {@link workspacePath} that is not the top folder. */
export function workspaceFilePath(given: string): string {
  const file = workspacePath(given);
  if (file === ".")
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `${JSON.stringify(given)} names the workspace itself, not a file; give a file such as "MEMORY.md".`,
    );
  return file;
}

/** The entries of `folder` among `files` (path -> size): files directly in it, and the folders on the way to deeper ones. */
export function entriesIn(files: Iterable<[string, number]>, folder: string): WorkspaceEntry[] {
  const prefix = folder === "." ? "" : `${folder}/`;
  const found = new Map<string, WorkspaceEntry>();
  for (const [file, bytes] of files) {
    if (!file.startsWith(prefix)) continue;
    const [name, ...deeper] = file.slice(prefix.length).split("/");
    found.set(name!, deeper.length > 0 ? { name: name!, type: "folder" } : { name: name!, type: "file", bytes });
  }
  return [...found.values()].sort(byName);
}

/** Orders entries by name, code point by code point (the same on every machine and backend). */
export const byName = (a: WorkspaceEntry, b: WorkspaceEntry): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
