import { mkdir, mkdtemp, readFile, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureWorkspace } from "../../../src/agents/workspace/ensure-workspace.js";
import { invokeTool } from "../../../src/tools/tool-registry.js";
import { FILE_TOOLS } from "../../../src/tools/workspace/file-tools.js";
import { EVERY_FILE_TOOL, ESCAPING_PATHS } from "../../support/file-tool-cases.js";
import { type ToolHarness, createToolHarness } from "../../support/tool-harness.js";

let h: ToolHarness;
let root: string;
afterEach(async () => h?.close());

async function start(config: Record<string, unknown> = {}) {
  h = await createToolHarness({ config });
  root = h.core.workspaceOf("main").location;
  await ensureWorkspace(h.core.workspaceOf("main"));
}

const run = (name: string, args: unknown) =>
  invokeTool(FILE_TOOLS.find((t) => t.name === name)! as never, args, h.caller("agent:main:main"), h.deps) as Promise<
    Record<string, any>
  >;

describe("file tools", () => {
  it("writes, reads, edits and lists files inside the workspace, creating folders", async () => {
    await start();
    expect(await run("write", { path: "memory/2026-01-31.md", content: "- Ann likes tea\n" })).toMatchObject({
      status: "ok",
      path: "memory/2026-01-31.md",
    });
    expect(await run("read", { path: "memory/2026-01-31.md" })).toEqual({
      path: "memory/2026-01-31.md",
      content: "- Ann likes tea\n",
    });
    expect(await run("edit", { path: "memory/2026-01-31.md", oldText: "tea", newText: "green tea" })).toMatchObject({
      status: "ok",
    });
    expect(await readFile(path.join(root, "memory/2026-01-31.md"), "utf8")).toBe("- Ann likes green tea\n");
    expect(await run("list", {})).toMatchObject({
      entries: expect.arrayContaining([
        { name: "AGENTS.md", type: "file" },
        { name: "memory", type: "folder" },
      ]),
    });
    expect(await run("list", { path: "memory" })).toEqual({
      path: "memory",
      entries: [{ name: "2026-01-31.md", type: "file" }],
    });
  });

  it.each(ESCAPING_PATHS)("refuses %s for every tool", async (_name, args) => {
    await start();
    for (const [tool, extra] of EVERY_FILE_TOOL) {
      expect(await run(tool, { ...args, ...extra }), tool).toEqual({
        status: "forbidden",
        error: expect.stringContaining("outside your workspace"),
      });
    }
  });

  it("appends to a file, creating it and its folders, and refuses to grow it over maxFileBytes", async () => {
    await start({ agents: { defaults: { workspace: { maxFileBytes: 1024 } } } });
    const line = "x".repeat(499);
    expect(await run("append", { path: "log/today.md", text: `${line}\n` })).toEqual({
      status: "ok",
      path: "log/today.md",
      bytes: 500,
    });
    expect(await run("append", { path: "log/today.md", text: `${line}\n` })).toMatchObject({ bytes: 1000 });
    expect(await run("append", { path: "log/today.md", text: `${line}\n` })).toEqual({
      status: "error",
      error: expect.stringContaining("would make it 1500 bytes, over the 1024-byte limit"),
    });
    expect(await readFile(path.join(root, "log/today.md"), "utf8")).toBe(`${line}\n${line}\n`);
  });

  it("accepts an absolute path that points inside the workspace", async () => {
    await start();
    expect(await run("read", { path: path.join(root, "USER.md") })).toMatchObject({
      content: expect.stringContaining("Who the owner is"),
    });
  });

  it("refuses a symlink leading out of the workspace, for reading and for writing through it", async () => {
    await start();
    const outside = await mkdtemp(path.join(os.tmpdir(), "sb-outside-"));
    await writeFile(path.join(outside, "secret.txt"), "top secret");
    await symlink(outside, path.join(root, "escape"));
    await symlink(path.join(outside, "secret.txt"), path.join(root, "secret-link.txt"));
    expect(await run("read", { path: "escape/secret.txt" })).toEqual({
      status: "forbidden",
      error: expect.stringContaining("symbolic link"),
    });
    expect(await run("read", { path: "secret-link.txt" })).toEqual({
      status: "forbidden",
      error: expect.stringContaining("symbolic link"),
    });
    expect(await run("write", { path: "escape/new.txt", content: "x" })).toMatchObject({ status: "forbidden" });
    expect(await run("list", { path: "escape" })).toMatchObject({ status: "forbidden" });
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("top secret");
  });

  it("refuses to write through a dangling symlink that points outside", async () => {
    await start();
    const outside = await mkdtemp(path.join(os.tmpdir(), "sb-outside-"));
    await symlink(path.join(outside, "planted.txt"), path.join(root, "dangling.txt"));
    expect(await run("write", { path: "dangling.txt", content: "x" })).toMatchObject({ status: "forbidden" });
    await expect(readFile(path.join(outside, "planted.txt"), "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("follows a symlink that stays inside the workspace", async () => {
    await start();
    await mkdir(path.join(root, "notes"));
    await writeFile(path.join(root, "notes", "a.md"), "inside");
    await symlink(path.join(root, "notes"), path.join(root, "alias"));
    expect(await run("read", { path: "alias/a.md" })).toMatchObject({ content: "inside" });
  });

  it("refuses files over agents.defaults.workspace.maxFileBytes, to read and to write", async () => {
    await start({ agents: { defaults: { workspace: { maxFileBytes: 1024 } } } });
    await writeFile(path.join(root, "big.txt"), "x".repeat(2000));
    expect(await run("read", { path: "big.txt" })).toEqual({
      status: "error",
      error: expect.stringContaining("over the 1024-byte limit"),
    });
    expect(await run("write", { path: "new.txt", content: "y".repeat(1025) })).toEqual({
      status: "error",
      error: expect.stringContaining("over the 1024-byte limit"),
    });
  });

  it("edits only text that occurs exactly once, and says how often it occurs", async () => {
    await start();
    await writeFile(path.join(root, "a.md"), "one one two");
    expect(await run("edit", { path: "a.md", oldText: "one", newText: "1" })).toEqual({
      status: "error",
      error: expect.stringContaining("occurs 2 times"),
    });
    expect(await run("edit", { path: "a.md", oldText: "three", newText: "3" })).toEqual({
      status: "error",
      error: expect.stringContaining("occurs 0 times"),
    });
    expect(await run("edit", { path: "a.md", oldText: "two", newText: "$&2" })).toMatchObject({ status: "ok" });
    expect(await readFile(path.join(root, "a.md"), "utf8")).toBe("one one $&2");
  });

  it("names a missing file", async () => {
    await start();
    expect(await run("read", { path: "nope.md" })).toEqual({
      status: "error",
      error: '"nope.md" does not exist; list shows the files.',
    });
  });
});
