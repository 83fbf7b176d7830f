import { access, constants, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Workspace } from "../../workspace/workspace-port.js";

/** The starter files a new workspace gets, by name (never overwritten once they exist). */
const STARTER_FILES: Readonly<Record<string, string>> = {
  "AGENTS.md": [
    "# How to behave",
    "",
    "- Answer directly and briefly; say when you are unsure.",
    "- Your workspace is your desk: read, write, edit and list files in it with the file tools.",
    "- Write what must survive a long conversation into memory/YYYY-MM-DD.md or MEMORY.md.",
    "",
  ].join("\n"),
  "USER.md": ["# Who the owner is", "", "- Name:", "- Time zone:", "- Preferences:", ""].join("\n"),
  "MEMORY.md": ["# Durable notes", "", "Facts worth keeping across sessions go here, one per line.", ""].join("\n"),
};

/** What {@link ensureWorkspace} found. */
export interface WorkspaceState {
  /** where the workspace is ({@link Workspace.location}) */
  dir: string;
  /** files this call created */
  created: string[];
  /** false when the directory cannot be written (memory flushes are then skipped) */
  writable: boolean;
}

/** Gives the workspace its starter files where missing (and, as a folder, its `memory/` folder); never overwrites. */
export async function ensureWorkspace(workspace: Workspace): Promise<WorkspaceState> {
  if (workspace.folder) return ensureFolder(workspace, workspace.folder);
  // Rows: each created where missing in one statement (INSERT .. ON CONFLICT DO NOTHING, fenced), so
  // a file another gateway created, and maybe edited, meanwhile is never replaced by a starter.
  return { dir: workspace.location, created: await createStarters(workspace), writable: true };
}

/** Creates the starter files that are missing ({@link Workspace.create}), at once; the names of those it created. */
async function createStarters(workspace: Workspace): Promise<string[]> {
  const starters = Object.entries(STARTER_FILES);
  const made = await Promise.all(starters.map(([name, text]) => workspace.create(name, text)));
  return starters.filter((_, i) => made[i]).map(([name]) => name);
}

/** {@link ensureWorkspace} on a folder. */
async function ensureFolder(workspace: Workspace, dir: string): Promise<WorkspaceState> {
  let created: string[] = [];
  try {
    await mkdir(path.join(dir, "memory"), { recursive: true });
    created = await createStarters(workspace);
  } catch {
    // A read-only workspace is allowed: the prompt still reads what is there.
  }
  return { dir, created, writable: await folderWritable(dir) };
}

/** True when the workspace can be written: a folder that exists and this process may write into; rows always. */
export async function isWritable(workspace: Workspace): Promise<boolean> {
  return workspace.folder === undefined || folderWritable(workspace.folder);
}

const folderWritable = (dir: string): Promise<boolean> =>
  access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );
