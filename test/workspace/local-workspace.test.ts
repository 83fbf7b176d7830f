import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalWorkspace } from "../../src/workspace/local-workspace.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "sb-local-ws-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("the local workspace", () => {
  it("is the folder: a file edited by hand is what the port reads, and a write is a plain file", async () => {
    const ws = createLocalWorkspace(path.join(dir, "workspace"));
    await ws.write("memory/today.md", "from the port");
    expect(await readFile(path.join(dir, "workspace", "memory", "today.md"), "utf8")).toBe("from the port");
    await writeFile(path.join(dir, "workspace", "USER.md"), "edited by hand");
    expect(await ws.read("USER.md")).toBe("edited by hand");
  });

  it("refuses a symlink that leads outside the folder, naming the fix", async () => {
    await mkdir(path.join(dir, "workspace"));
    await writeFile(path.join(dir, "secret.txt"), "secret");
    await symlink(path.join(dir, "secret.txt"), path.join(dir, "workspace", "link.md"));
    const ws = createLocalWorkspace(path.join(dir, "workspace"));
    await expect(ws.read("link.md")).rejects.toThrow(/leads outside your workspace through a symbolic link/);
    await expect(ws.write("link.md", "x")).rejects.toThrow(/symbolic link/);
    expect(await readFile(path.join(dir, "secret.txt"), "utf8")).toBe("secret");
  });
});
