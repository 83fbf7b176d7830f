import { afterEach, describe, expect, it } from "vitest";
import { ensureWorkspace } from "../../../src/agents/workspace/ensure-workspace.js";
import { invokeTool } from "../../../src/tools/tool-registry.js";
import { FILE_TOOLS } from "../../../src/tools/workspace/file-tools.js";
import { createMemoryWorkspace } from "../../../src/workspace/memory-workspace.js";
import type { Workspace } from "../../../src/workspace/workspace-port.js";
import { EVERY_FILE_TOOL, ESCAPING_PATHS } from "../../support/file-tool-cases.js";
import { type ToolHarness, createToolHarness } from "../../support/tool-harness.js";

// The file tools on a workspace that is not a folder (the PostgreSQL backend's rows), here the memory one.
let h: ToolHarness;
let workspace: Workspace;
afterEach(async () => h?.close());

async function start(config: Record<string, unknown> = {}) {
  h = await createToolHarness({ config });
  workspace = createMemoryWorkspace("main");
  await ensureWorkspace(workspace);
}

const run = (name: string, args: unknown) =>
  invokeTool(FILE_TOOLS.find((t) => t.name === name)! as never, args, h.caller("agent:main:main"), {
    ...h.deps,
    workspaceOf: () => workspace,
  }) as Promise<Record<string, any>>;

describe("file tools on a workspace port without a folder", () => {
  it("bootstraps the starter files, then writes, reads, edits, appends and lists through the port", async () => {
    await start();
    expect(await run("list", {})).toEqual({
      path: ".",
      entries: [
        { name: "AGENTS.md", type: "file" },
        { name: "MEMORY.md", type: "file" },
        { name: "USER.md", type: "file" },
      ],
    });
    expect(await run("write", { path: "memory/2026-01-31.md", content: "- Ann likes tea\n" })).toMatchObject({
      status: "ok",
    });
    expect(await run("edit", { path: "memory/2026-01-31.md", oldText: "tea", newText: "$& green" })).toMatchObject({
      status: "ok",
    });
    expect(await run("append", { path: "memory/2026-01-31.md", text: "- birthday May 3\n" })).toMatchObject({
      bytes: 38,
    });
    expect(await workspace.read("memory/2026-01-31.md")).toBe("- Ann likes $& green\n- birthday May 3\n");
    expect(await run("read", { path: "memory/2026-01-31.md" })).toMatchObject({ content: expect.any(String) });
    expect(await run("list", { path: "memory" })).toEqual({
      path: "memory",
      entries: [{ name: "2026-01-31.md", type: "file" }],
    });
  });

  it("keeps the starter files an owner already edited", async () => {
    h = await createToolHarness({ config: {} });
    workspace = createMemoryWorkspace("main");
    await workspace.write("USER.md", "Owner: Ann");
    expect((await ensureWorkspace(workspace)).created).toEqual(["AGENTS.md", "MEMORY.md"]);
    expect(await workspace.read("USER.md")).toBe("Owner: Ann");
  });

  it.each(ESCAPING_PATHS)("refuses %s for every tool", async (_name, args) => {
    await start();
    for (const [tool, extra] of EVERY_FILE_TOOL) {
      expect(await run(tool, { ...args, ...extra }), tool).toEqual({
        status: "forbidden",
        error: expect.stringContaining("is not a path inside the workspace"),
      });
    }
  });

  it("refuses files over maxFileBytes to read, write and append, and names a missing file or folder", async () => {
    await start({ agents: { defaults: { workspace: { maxFileBytes: 1024 } } } });
    await workspace.write("big.txt", "x".repeat(2000));
    expect(await run("read", { path: "big.txt" })).toEqual({
      status: "error",
      error: expect.stringContaining("has 2000 bytes, over the 1024-byte limit"),
    });
    expect(await run("write", { path: "new.txt", content: "y".repeat(1025) })).toMatchObject({ status: "error" });
    expect(await run("append", { path: "MEMORY.md", text: "z".repeat(1024) })).toEqual({
      status: "error",
      error: expect.stringContaining("over the 1024-byte limit"),
    });
    expect(await workspace.read("new.txt")).toBeUndefined();
    expect(await run("read", { path: "nope.md" })).toEqual({
      status: "error",
      error: '"nope.md" does not exist; list shows the files.',
    });
    expect(await run("list", { path: "nope" })).toEqual({
      status: "error",
      error: '"nope" is not a folder of your workspace.',
    });
  });
});
