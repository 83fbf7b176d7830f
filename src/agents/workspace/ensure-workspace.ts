import { access, constants, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

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
  dir: string;
  /** files this call created */
  created: string[];
  /** false when the directory cannot be written (memory flushes are then skipped) */
  writable: boolean;
}

/** Creates the workspace with its starter files and `memory/` folder where missing; never overwrites. */
export async function ensureWorkspace(dir: string): Promise<WorkspaceState> {
  const created: string[] = [];
  try {
    await mkdir(path.join(dir, "memory"), { recursive: true });
    for (const [name, text] of Object.entries(STARTER_FILES)) {
      // "wx" fails when the file exists: the owner's edits are never replaced.
      const made = await writeFile(path.join(dir, name), text, { flag: "wx" }).then(
        () => true,
        () => false,
      );
      if (made) created.push(name);
    }
  } catch {
    // A read-only workspace is allowed: the prompt still reads what is there.
  }
  return { dir, created, writable: await isWritable(dir) };
}

/** True when `dir` exists and this process may write into it. */
export async function isWritable(dir: string): Promise<boolean> {
  return access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );
}
