// The contract every implementation of the workspace port (src/workspace/workspace-port.ts) runs:
// files written whole and read back exactly (unicode, empty, large), replaced not appended, created
// only where missing, appends
// and updates (a change of the text) within a size limit, folders
// listed as the entries under them, missing files and folders reported as missing, agents kept
// apart, paths that leave the workspace refused with the fix, and everything there after a reopen.
// Runners: test/workspace/local-workspace.contract.test.ts, memory-workspace.contract.test.ts,
// test/state/postgres-workspace.contract.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCodes } from "../../src/errors.js";
import type { OpenWorkspace } from "../../src/workspace/workspace-port.js";

/** An implementation of the workspace port, as the contract needs it. */
export interface WorkspaceContractSubject {
  /** names the implementation in the suite's title */
  name: string;
  /** Opens the workspaces kept for `dir` (an empty temporary folder per test; opened again to reopen them). */
  open(dir: string): Promise<{ workspaces: OpenWorkspace; close(): Promise<void> }>;
}

const invalidArgument = expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT });

/** Runs the workspace contract on `subject`. */
export function runWorkspaceContract(subject: WorkspaceContractSubject): void {
  async function fresh() {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-workspace-contract-"));
    const opened = await subject.open(dir);
    onTestFinished(async () => {
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    });
    return { ...opened, dir };
  }

  describe(`workspace contract: ${subject.name}`, () => {
    it("reads back exactly what was written, replaced whole, unicode and large text included", async () => {
      const ws = (await fresh()).workspaces("main");
      const big = "line ✓ ünïcödé 🚀\n".repeat(20_000);
      await ws.write("MEMORY.md", "old text that is longer");
      await ws.write("MEMORY.md", "new");
      await ws.write("memory/2026-01-31.md", big);
      await ws.write("empty.md", "");
      expect(await ws.read("MEMORY.md")).toBe("new");
      expect(await ws.read("./memory//2026-01-31.md")).toBe(big);
      expect(await ws.read("empty.md")).toBe("");
      expect(await ws.read("nothing.md")).toBeUndefined();
      expect(await ws.read("memory/nothing/deeper.md")).toBeUndefined();
    });

    it("lists a folder's files with their size and its subfolders, sorted; a missing folder is empty", async () => {
      const ws = (await fresh()).workspaces("main");
      await ws.write("USER.md", "ü");
      await ws.write("AGENTS.md", "a");
      await ws.write("memory/b.md", "bb");
      await ws.write("memory/deep/c.md", "c");
      expect(await ws.list()).toEqual([
        { name: "AGENTS.md", type: "file", bytes: 1 },
        { name: "USER.md", type: "file", bytes: 2 },
        { name: "memory", type: "folder" },
      ]);
      expect(await ws.list("memory/")).toEqual([
        { name: "b.md", type: "file", bytes: 2 },
        { name: "deep", type: "folder" },
      ]);
      expect(await ws.list("nowhere")).toEqual([]);
    });

    it("keeps each agent's files apart", async () => {
      const { workspaces } = await fresh();
      await workspaces("main").write("MEMORY.md", "main's");
      await workspaces("ops").write("MEMORY.md", "ops'");
      expect(await workspaces("main").read("MEMORY.md")).toBe("main's");
      expect(await workspaces("ops").read("MEMORY.md")).toBe("ops'");
    });

    it("refuses paths that leave the workspace, and the workspace itself as a file, writing nothing", async () => {
      const ws = (await fresh()).workspaces("main");
      for (const bad of ["../x.md", "/etc/passwd", "a/../../x", "a\0b"]) {
        await expect(ws.write(bad, "x")).rejects.toThrow(invalidArgument);
        await expect(ws.read(bad)).rejects.toThrow(/not a path inside the workspace; use a path relative to it/);
      }
      await expect(ws.write(".", "x")).rejects.toThrow(/names the workspace itself/);
      await expect(ws.list("..")).rejects.toThrow(invalidArgument);
      expect(await ws.list()).toEqual([]);
    });

    it("appends in place, creating the file; an append over the limit writes nothing and tells the size it would have had", async () => {
      const ws = (await fresh()).workspaces("main");
      expect(await ws.append("memory/log.md", "- one\n", 100)).toEqual({ bytes: 6, written: true });
      expect(await ws.append("memory/log.md", "- twö\n", 100)).toEqual({ bytes: 13, written: true });
      expect(await ws.append("memory/log.md", "x".repeat(90), 100)).toEqual({ bytes: 103, written: false });
      expect(await ws.append("big.md", "x".repeat(101), 100)).toEqual({ bytes: 101, written: false });
      expect(await ws.read("memory/log.md")).toBe("- one\n- twö\n");
      expect(await ws.read("big.md")).toBeUndefined();
    });

    it("creates a file only where none is: an existing one is kept, and a refused path creates nothing", async () => {
      const ws = (await fresh()).workspaces("main");
      await ws.write("USER.md", "- Name: Ann\n");
      expect(await ws.create("USER.md", "- Name:\n")).toBe(false);
      expect(await ws.read("USER.md")).toBe("- Name: Ann\n");
      expect(await ws.create("memory/new/deep.md", "fresh ✓")).toBe(true);
      expect(await ws.read("memory/new/deep.md")).toBe("fresh ✓");
      expect(await ws.create("memory/new/deep.md", "again")).toBe(false);
      expect(await ws.read("memory/new/deep.md")).toBe("fresh ✓");
      await expect(ws.create("../escape.md", "x")).rejects.toThrow(invalidArgument);
    });

    it("updates a file with a change of its text; a missing file or a change that throws writes nothing", async () => {
      const ws = (await fresh()).workspaces("main");
      await ws.write("USER.md", "- Name:\n");
      expect(await ws.update("USER.md", (text) => text.replace("Name:", "Name: Ann"))).toBe("- Name: Ann\n");
      expect(await ws.read("USER.md")).toBe("- Name: Ann\n");
      expect(await ws.update("nothing.md", () => "made up")).toBeUndefined();
      expect(await ws.read("nothing.md")).toBeUndefined();
      const refuse = () => {
        throw new Error("no such text");
      };
      await expect(ws.update("USER.md", refuse)).rejects.toThrow("no such text");
      expect(await ws.read("USER.md")).toBe("- Name: Ann\n");
    });

    it("has every written file after a reopen", async () => {
      const { workspaces, close, dir } = await fresh();
      await workspaces("main").write("memory/today.md", "kept");
      await close();
      const again = await subject.open(dir);
      onTestFinished(() => again.close());
      expect(await again.workspaces("main").read("memory/today.md")).toBe("kept");
    });
  });
}
