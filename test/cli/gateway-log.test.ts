// `switchboard gateway run` logs for a person on a terminal and JSON lines for a machine otherwise:
// a real process with a corrupt session store, once under a pseudo-terminal (util-linux `script`), once on a pipe.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../support/fake-cli-io.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");
const CORRUPT = "session store is corrupt; moved aside, starting empty";
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGTERM");
});

async function homeWithCorruptStore(): Promise<string> {
  const home = await tempHome();
  await mkdir(path.join(home, "agents/main/sessions"), { recursive: true });
  await writeFile(path.join(home, "agents/main/sessions/sessions.json"), "{ oops");
  return home;
}

/** Everything the process wrote (both streams) once its banner is out. */
async function outputUntilBanner(command: string, args: string[], home: string): Promise<string> {
  const child = spawn(command, args, { env: { ...process.env, SWITCHBOARD_HOME: home, NO_COLOR: "1" } });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toContain("state:");
  return output.replaceAll("\r\n", "\n");
}

describe("switchboard gateway run logs", () => {
  it("writes readable lines on a terminal: the corrupt store is a sentence with its fields, no JSON", async () => {
    const home = await homeWithCorruptStore();
    const output = await outputUntilBanner("script", ["-qec", `${bin} gateway run --port 0`, "/dev/null"], home);
    expect(output).toMatch(new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\] ERROR: ${CORRUPT.replace(/[;]/g, "\\$&")}$`, "m"));
    expect(output).toContain(`    movedTo: "${path.join(home, "agents/main/sessions/sessions.json.corrupt-")}`);
    expect(output).not.toMatch(/^\{"level"/m);
  }, 60_000);

  it("writes JSON lines when stderr is not a terminal", async () => {
    const home = await homeWithCorruptStore();
    const output = await outputUntilBanner(bin, ["gateway", "run", "--port", "0"], home);
    const line = output.split("\n").find((l) => l.includes(CORRUPT))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 50,
      msg: CORRUPT,
      file: path.join(home, "agents/main/sessions/sessions.json"),
    });
  }, 60_000);
});
