import { writeFileSync } from "node:fs";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPromptFileReader, readPromptFiles } from "../../../src/agents/workspace/prompt-files.js";
import { createLocalWorkspace } from "../../../src/workspace/local-workspace.js";
import { createMemoryWorkspace } from "../../../src/workspace/memory-workspace.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "sb-prompt-files-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const texts = (files: readonly { name: string; text: string }[]) => files.map((f) => `${f.name}: ${f.text}`);

describe("createPromptFileReader", () => {
  it("gives what reading the files gives, and picks up every edit on the next call", async () => {
    const read = createPromptFileReader();
    await writeFile(path.join(dir, "AGENTS.md"), "Be brief.\n");
    await writeFile(path.join(dir, "MEMORY.md"), "  ");
    expect(await read(createLocalWorkspace(dir), 4000)).toEqual(await readPromptFiles(createLocalWorkspace(dir), 4000));
    expect(texts(await read(createLocalWorkspace(dir), 4000))).toEqual(["AGENTS.md: Be brief."]);

    // The same size, saved right after: still seen.
    await writeFile(path.join(dir, "AGENTS.md"), "Be terse.\n");
    await writeFile(path.join(dir, "USER.md"), "Owner: Ann");
    expect(texts(await read(createLocalWorkspace(dir), 4000))).toEqual(["AGENTS.md: Be terse.", "USER.md: Owner: Ann"]);

    await unlink(path.join(dir, "AGENTS.md"));
    await writeFile(path.join(dir, "MEMORY.md"), "x".repeat(50));
    const files = await read(createLocalWorkspace(dir), 10);
    expect(files).toEqual(await readPromptFiles(createLocalWorkspace(dir), 10));
    expect(files.map((f) => [f.name, f.truncated])).toEqual([
      ["USER.md", false],
      ["MEMORY.md", true],
    ]);
  });

  it("gives a call that starts while another reads the files a check that started after it", async () => {
    const read = createPromptFileReader();
    const file = path.join(dir, "AGENTS.md");
    writeFileSync(file, "old");
    const before = [read(createLocalWorkspace(dir), 4000), read(createLocalWorkspace(dir), 4000)];
    writeFileSync(file, "new");
    const after = read(createLocalWorkspace(dir), 4000);
    expect(texts(await after)).toEqual(["AGENTS.md: new"]);
    // The calls made before the edit see the old text or the new one, never nothing.
    for (const files of await Promise.all(before))
      expect(["AGENTS.md: old", "AGENTS.md: new"]).toContain(texts(files)[0]);
    expect(texts(await read(createLocalWorkspace(dir), 4000))).toEqual(["AGENTS.md: new"]);
  });

  it("reads nothing without a workspace, and nothing from a workspace that does not exist", async () => {
    const read = createPromptFileReader();
    expect(await read(undefined, 4000)).toEqual([]);
    expect(await read(createLocalWorkspace(path.join(dir, "missing")), 4000)).toEqual([]);
  });

  it("reads a workspace that is not a folder (rows) through its port, every edit seen on the next call", async () => {
    const workspace = createMemoryWorkspace();
    const read = createPromptFileReader();
    await workspace.write("AGENTS.md", "Be brief.\n");
    await workspace.write("MEMORY.md", "  ");
    expect(texts(await read(workspace, 4000))).toEqual(["AGENTS.md: Be brief."]);
    await workspace.write("USER.md", "Owner: Ann");
    await workspace.write("AGENTS.md", "Be terse.");
    expect(texts(await read(workspace, 4000))).toEqual(["AGENTS.md: Be terse.", "USER.md: Owner: Ann"]);
    expect(await read(workspace, 4)).toEqual(await readPromptFiles(workspace, 4));
    expect((await read(workspace, 4))[0]).toMatchObject({ truncated: true, originalChars: 9 });
  });
});
