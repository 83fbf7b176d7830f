import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { acquireGatewayLock } from "../../src/gateway/gateway-lock.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");

describe("acquireGatewayLock", () => {
  it("creates a missing home with its parents and writes the lock there", async () => {
    const home = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-lock-")), "a", "b");
    const lock = await acquireGatewayLock(home, { port: 1234 });
    expect(JSON.parse(await readFile(path.join(home, "gateway.lock"), "utf8"))).toMatchObject({ port: 1234 });
    await lock.release();
  });

  it("refuses a home that is a file, naming it and the fix", async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-lock-")), "home");
    await writeFile(file, "");
    await expect(acquireGatewayLock(file, { port: 0 })).rejects.toThrow(
      `cannot use ${file} as the state folder (it is not a folder); set SWITCHBOARD_HOME to a folder you can write`,
    );
  });

  it("makes `gateway run` with a home that cannot be created exit at once with one line naming it", async () => {
    const run = promisify(execFile)(bin, ["gateway", "run", "--port", "0"], {
      env: { ...process.env, SWITCHBOARD_HOME: "/proc/1/nope" },
      // Before the fix this spun for ever in Node's recursive mkdir; the timeout turns that into a failure.
      timeout: 30_000,
    });
    const failure = (await run.then(
      () => undefined,
      (err: unknown) => err,
    )) as { code: number; killed: boolean; stdout: string; stderr: string };
    expect(failure).toMatchObject({ code: 1, killed: false, stdout: "" });
    expect(failure.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^gateway not started: cannot use \/proc\/1\/nope as the state folder \(.+\); set SWITCHBOARD_HOME/,
      ),
    ]);
  });
});
