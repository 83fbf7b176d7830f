import { appendFile, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { ToolDeps } from "../tool-deps.js";
import { ToolFailure, defineTool } from "../tool-definition.js";
import { maxFileBytes, workspaceOf } from "./workspace-of.js";
import { resolveInWorkspace } from "./workspace-path.js";

const PathField = z.string().min(1).describe('a path relative to your workspace, e.g. "memory/2026-01-31.md"');
const LIST_LIMIT = 500;

async function readCapped(file: string, relative: string, limit: number): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new ToolFailure("error", `"${relative}" does not exist; list shows the files.`);
  if (!info.isFile()) throw new ToolFailure("error", `"${relative}" is not a file.`);
  if (info.size > limit)
    throw new ToolFailure(
      "error",
      `"${relative}" has ${info.size} bytes, over the ${limit}-byte limit of the file tools.`,
    );
  return readFile(file, "utf8");
}

function checkSize(text: string, relative: string, limit: number): void {
  const bytes = Buffer.byteLength(text);
  if (bytes > limit)
    throw new ToolFailure(
      "error",
      `writing ${bytes} bytes to "${relative}" is over the ${limit}-byte limit of the file tools.`,
    );
}

/** `read`: a text file of the workspace. */
const readFileTool = defineTool({
  name: "read",
  description: "Read a text file of your workspace.",
  input: z.strictObject({ path: PathField }),
  async run(input, caller, deps: ToolDeps) {
    const root = workspaceOf(deps, caller);
    const file = await resolveInWorkspace(root, input.path);
    return { path: input.path, content: await readCapped(file, input.path, maxFileBytes(deps)) };
  },
});

/** `write`: creates or replaces a text file of the workspace (folders are created). */
const writeFileTool = defineTool({
  name: "write",
  description: "Create or replace a text file of your workspace; missing folders are created.",
  input: z.strictObject({ path: PathField, content: z.string().describe("the whole new content of the file") }),
  async run(input, caller, deps: ToolDeps) {
    const root = workspaceOf(deps, caller);
    const file = await resolveInWorkspace(root, input.path);
    checkSize(input.content, input.path, maxFileBytes(deps));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, input.content, "utf8");
    return { status: "ok", path: input.path, bytes: Buffer.byteLength(input.content) };
  },
});

/** `append`: adds text at the end of a workspace file (a log, a daily memory note), creating it when missing. */
const appendFileTool = defineTool({
  name: "append",
  description: "Add text at the end of a text file of your workspace; the file and missing folders are created.",
  input: z.strictObject({
    path: PathField,
    text: z.string().min(1).describe('what to add, e.g. "- 14:05 called Ann back\n"'),
  }),
  async run(input, caller, deps: ToolDeps) {
    const root = workspaceOf(deps, caller);
    const file = await resolveInWorkspace(root, input.path);
    const before = (await stat(file).catch(() => undefined))?.size ?? 0;
    const bytes = before + Buffer.byteLength(input.text);
    if (bytes > maxFileBytes(deps))
      throw new ToolFailure(
        "error",
        `appending to "${input.path}" would make it ${bytes} bytes, over the ${maxFileBytes(deps)}-byte limit of the file tools.`,
      );
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, input.text, "utf8");
    return { status: "ok", path: input.path, bytes };
  },
});

/** `edit`: replaces one exact piece of text in a workspace file. */
const editFileTool = defineTool({
  name: "edit",
  description: "Replace an exact piece of text in a file of your workspace; the text must occur exactly once.",
  input: z.strictObject({
    path: PathField,
    oldText: z.string().min(1).describe('the exact text to replace, e.g. "- Name:"'),
    newText: z.string().describe('what replaces it, e.g. "- Name: Ann"'),
  }),
  async run(input, caller, deps: ToolDeps) {
    const root = workspaceOf(deps, caller);
    const file = await resolveInWorkspace(root, input.path);
    const text = await readCapped(file, input.path, maxFileBytes(deps));
    const count = text.split(input.oldText).length - 1;
    if (count !== 1)
      throw new ToolFailure(
        "error",
        `oldText occurs ${count} times in "${input.path}"; give text that occurs exactly once.`,
      );
    const next = text.replace(input.oldText, () => input.newText);
    checkSize(next, input.path, maxFileBytes(deps));
    await writeFile(file, next, "utf8");
    return { status: "ok", path: input.path };
  },
});

/** `list`: the entries of a workspace folder. */
const listFilesTool = defineTool({
  name: "list",
  description: "List the files and folders of a folder of your workspace (default: its top).",
  input: z.strictObject({
    path: z.string().default(".").describe('a folder relative to your workspace, e.g. "memory"'),
  }),
  async run(input, caller, deps: ToolDeps) {
    const root = workspaceOf(deps, caller);
    const dir = await resolveInWorkspace(root, input.path);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
      throw new ToolFailure("error", `"${input.path}" is not a folder of your workspace.`);
    });
    const listed = entries
      .slice(0, LIST_LIMIT)
      .map((e) => ({ name: e.name, type: e.isDirectory() ? "folder" : e.isSymbolicLink() ? "link" : "file" }));
    return { path: input.path, entries: listed, ...(entries.length > LIST_LIMIT && { truncated: true }) };
  },
});

/** The workspace file tools. */
export const FILE_TOOLS = [readFileTool, writeFileTool, appendFileTool, editFileTool, listFilesTool];
