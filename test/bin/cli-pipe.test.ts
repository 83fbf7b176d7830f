// `switchboard status | head -3` closes the pipe before the CLI has written everything: the CLI must
// stop quietly (exit 0, no EPIPE stack trace), as Unix tools do.
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const BIN = path.resolve(import.meta.dirname, "../../bin/switchboard");

describe("the CLI writing into a pipe its reader closed", () => {
  it("exits 0 without a stack trace when stdout's reader is gone", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-pipe-"));
    await writeFile(path.join(home, "switchboard.json5"), '{ session: { dmScope: "per-peer" } }\n');
    const child = spawn(process.execPath, [BIN, "status"], {
      env: { ...process.env, SWITCHBOARD_HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy(); // the reader leaves before the CLI writes its first line
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).not.toContain("EPIPE");
    expect(code).toBe(0);
  }, 30_000);
});
