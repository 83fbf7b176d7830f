import { z } from "zod";
import type { ToolDeps } from "../tool-deps.js";
import type { ToolCaller } from "../tool-definition.js";
import { ToolFailure, defineTool } from "../tool-definition.js";
import { type FileOps, fileOpsOf } from "./file-ops.js";
import { maxFileBytes, workspaceOf } from "./workspace-of.js";

const PathField = z.string().min(1).describe('a path relative to your workspace, e.g. "memory/2026-01-31.md"');

/** The file operations on the caller's workspace (its folder on local, its rows on PostgreSQL). */
const opsOf = (deps: ToolDeps, caller: ToolCaller): FileOps => fileOpsOf(workspaceOf(deps, caller));

/** `read`: a text file of the workspace. */
const readFileTool = defineTool({
  name: "read",
  description: "Read a text file of your workspace.",
  input: z.strictObject({ path: PathField }),
  async run(input, caller, deps: ToolDeps) {
    return { path: input.path, content: await opsOf(deps, caller).read(input.path, maxFileBytes(deps)) };
  },
});

/** `write`: creates or replaces a text file of the workspace (folders are created). */
const writeFileTool = defineTool({
  name: "write",
  description: "Create or replace a text file of your workspace; missing folders are created.",
  input: z.strictObject({ path: PathField, content: z.string().describe("the whole new content of the file") }),
  async run(input, caller, deps: ToolDeps) {
    await opsOf(deps, caller).write(input.path, input.content, maxFileBytes(deps));
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
    const bytes = await opsOf(deps, caller).append(input.path, input.text, maxFileBytes(deps));
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
    // On PostgreSQL the edit is compare-and-set: when another turn wrote the file meanwhile, it runs again on the new text.
    const replaceOnce = (text: string): string => {
      const count = text.split(input.oldText).length - 1;
      if (count !== 1)
        throw new ToolFailure(
          "error",
          `oldText occurs ${count} times in "${input.path}"; give text that occurs exactly once.`,
        );
      return text.replace(input.oldText, () => input.newText);
    };
    await opsOf(deps, caller).edit(input.path, replaceOnce, maxFileBytes(deps));
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
    return { path: input.path, ...(await opsOf(deps, caller).list(input.path)) };
  },
});

/** The workspace file tools. */
export const FILE_TOOLS = [readFileTool, writeFileTool, appendFileTool, editFileTool, listFilesTool];
