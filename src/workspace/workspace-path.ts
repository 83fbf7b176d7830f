import { readlink, realpath } from "node:fs/promises";
import path from "node:path";

/** A path that leaves the workspace (by `..`, an absolute path elsewhere, or a symlink); the message says which. */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkspacePathError";
  }
}

const inside = (root: string, target: string) => target === root || target.startsWith(root + path.sep);

// The deepest part of `target` that exists, resolved through symlinks, plus the rest as written.
// A dangling symlink is followed to where it points (writing through it would create the file there).
async function realOf(target: string, depth = 0): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      return path.join(await realpath(current), ...missing.reverse());
    } catch {
      const link = await readlink(current).catch(() => undefined);
      if (link !== undefined) {
        if (depth > 32) throw new WorkspacePathError("too many symbolic links in the path.");
        return realOf(path.join(path.resolve(path.dirname(current), link), ...missing.reverse()), depth + 1);
      }
      const parent = path.dirname(current);
      if (parent === current) return target;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * The absolute path of `relative` inside the workspace `root`; it throws when it leaves the
 * workspace by `..`, by an absolute path elsewhere, or through a symlink pointing outside: a {@link WorkspacePathError}.
 */
export async function resolveInWorkspace(root: string, relative: string): Promise<string> {
  const wanted = relative.trim() === "" ? "." : relative.trim();
  const lexical = path.resolve(root, wanted);
  if (!inside(path.resolve(root), lexical)) {
    throw new WorkspacePathError(
      `"${relative}" is outside your workspace; use a path relative to it, such as "notes.md" or "memory/today.md".`,
    );
  }
  const [realRoot, real] = await Promise.all([realpath(root), realOf(lexical)]);
  if (!inside(realRoot, real)) {
    throw new WorkspacePathError(
      `"${relative}" leads outside your workspace through a symbolic link; only files inside the workspace can be used.`,
    );
  }
  return real;
}
