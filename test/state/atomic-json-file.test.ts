import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicJsonFile, CorruptFileError } from "../../src/state/atomic-json-file.js";
import { startTestGateway, tempHome } from "../support/test-gateway.js";

// Far above any pid_max: no live process has it.
const DEAD_PID = 999_999_999;

describe("removeStaleTempFiles", () => {
  it("removes the temp files a killed atomic write left behind when the gateway starts, and keeps a live writer's", async () => {
    const home = await tempHome();
    const sessions = path.join(home, "agents", "main", "sessions");
    const state = path.join(home, "state");
    await mkdir(sessions, { recursive: true });
    await mkdir(state, { recursive: true });
    const stale = [
      path.join(sessions, `sessions.json.${DEAD_PID}.0b7c2a9e-1111-4a4a-9c9c-123456789abc.tmp`),
      path.join(state, `outbox.json.${DEAD_PID}.2f0c2a9e-2222-4a4a-9c9c-123456789abc.tmp`),
    ];
    const live = path.join(state, `outbox.json.${process.pid}.3e0c2a9e-3333-4a4a-9c9c-123456789abc.tmp`);
    const unrelated = path.join(state, "notes.tmp");
    for (const file of [...stale, live, unrelated]) await writeFile(file, "{ half a fi");
    const gw = await startTestGateway({ home });
    try {
      expect(await readdir(sessions)).not.toContain(path.basename(stale[0]!));
      const left = await readdir(state);
      expect(left).not.toContain(path.basename(stale[1]!));
      expect(left).toEqual(expect.arrayContaining([path.basename(live), "notes.tmp"]));
      expect(gw.logger.records.some((r) => r.message === "removed temp files a killed write left behind")).toBe(true);
    } finally {
      await gw.close();
    }
  });
});

describe("AtomicJsonFile.read", () => {
  it("reads a hand-edited file (comments, trailing commas) and names a file that is not an object", async () => {
    const dir = await tempHome();
    const file = path.join(dir, "edited.json");
    await writeFile(file, '{\n  // kept by hand\n  "a": { "b": 1, },\n}\n');
    expect(await new AtomicJsonFile(file).read()).toEqual({ a: { b: 1 } });
    await writeFile(file, "{ not json at all");
    await expect(new AtomicJsonFile(file).read()).rejects.toBeInstanceOf(CorruptFileError);
  });
});
