import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempHome } from "../support/fake-cli-io.js";
import { useGatewayBinaries } from "../support/gateway-binary.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");
/** `bin/switchboard gateway run --port 0`, stopped after each test. */
const startGatewayProcess = useGatewayBinaries();

function runChat(
  args: string[],
  home: string,
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, ["chat", ...args], { env: { ...process.env, SWITCHBOARD_HOME: home } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("switchboard chat", () => {
  it("gets answers from the offline model through a real gateway process, and the gateway stops cleanly on SIGTERM", async () => {
    const home = await tempHome();
    const gateway = await startGatewayProcess(home);
    // The banner's lines may arrive after the "listening on" line that startGatewayProcess waits for.
    await expect.poll(() => gateway.output(), { timeout: 10_000 }).toContain("offline/echo (built-in offline model");
    const chat = await runChat(["--url", gateway.url], home, "hello gateway\nhow are you\nlist sessions\n");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain("agent: Echo: hello gateway\nagent: Echo: how are you");
    // No --url: the gateway started with --port 0 is found through the port its gateway.lock names.
    const again = await runChat([], home, "");
    expect(again.code).toBe(0);
    const lines = again.stdout.split("\n");
    expect(lines[0]).toBe("-- agent:main:main (Ctrl-D to leave)");
    expect(lines).toContain("you: hello gateway");
    expect(lines).toContain("you: list sessions");
    expect(lines).toContain("agent: [called sessions_list]");
    expect(lines.filter((line) => /^(agent|you):\s*$/.test(line))).toEqual([]);
    const exited = new Promise<number | null>((resolve) => gateway.child.once("exit", resolve));
    gateway.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);

  it("says how to start a gateway when none runs", async () => {
    const home = await tempHome();
    const run = promisify(execFile)(bin, ["chat", "--url", "ws://127.0.0.1:9"], {
      env: { ...process.env, SWITCHBOARD_HOME: home },
    });
    const failure = await run.then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("no gateway answers at ws://127.0.0.1:9. Start one with `npm start`");
  });
});
