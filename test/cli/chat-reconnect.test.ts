// The terminal chat across a gateway restart (#26 item 6): a real gateway process is SIGKILLed while
// `bin/switchboard chat` runs; the chat says so, reconnects when the gateway is back on the same
// home, and answers the line typed meanwhile once; or, when it never comes back, says what was not
// sent and exits non-zero.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { tempHome } from "../support/fake-cli-io.js";
import { type GatewayBinary, useGatewayBinaries } from "../support/gateway-binary.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");
const startGatewayProcess = useGatewayBinaries();

/** `bin/switchboard chat` with a pipe for stdin, typed into line by line. */
function startChat(args: string[], home: string) {
  const child: ChildProcessWithoutNullStreams = spawn(bin, ["chat", ...args], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    type: (line: string) => child.stdin.write(`${line}\n`),
    end: () => child.stdin.end(),
  };
}

async function killHard(gateway: GatewayBinary): Promise<void> {
  const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
  gateway.child.kill("SIGKILL");
  await exited;
}

/** Stops the gateway with SIGTERM (it closes its sockets) and waits for its exit. */
async function stopGently(gateway: GatewayBinary): Promise<void> {
  const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
  gateway.child.kill("SIGTERM");
  await exited;
}

const count = (text: string, line: string) => text.split("\n").filter((l) => l === line).length;

describe("switchboard chat across a gateway restart", () => {
  it("says the gateway went away, reconnects when it is back on the same home, and answers a line typed meanwhile once", async () => {
    const home = await tempHome();
    const first = await startGatewayProcess(home);
    const chat = startChat(["--url", first.url], home);
    await expect.poll(chat.stdout, { timeout: 30_000 }).toContain("(Ctrl-D to leave)");
    chat.type("before the crash");
    await expect.poll(chat.stdout, { timeout: 30_000 }).toContain("agent: Echo: before the crash");

    await killHard(first);
    await expect
      .poll(chat.stdout, { timeout: 10_000 })
      .toContain(`[the gateway at ${first.url} went away; reconnecting`);
    chat.type("typed while it was away");
    const second = await startGatewayProcess(home, {}, first.port);
    await expect.poll(chat.stdout, { timeout: 30_000 }).toContain("agent: Echo: typed while it was away");
    expect(chat.stdout()).toContain("[reconnected to the gateway]");
    chat.type("after the restart");
    await expect.poll(chat.stdout, { timeout: 30_000 }).toContain("agent: Echo: after the restart");
    chat.end();
    expect(await chat.exit).toBe(0);
    expect(count(chat.stdout(), "agent: Echo: typed while it was away")).toBe(1);

    // The session got the line once (a resend carries the same idempotency key).
    const client = await connectGateway(second.url);
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: "main",
      limit: 50,
    });
    await client.close();
    const said = history.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes("typed while"));
    expect(said).toHaveLength(1);
  }, 120_000);

  it("gives up on a gateway that does not come back: says so, names the line not sent, exits 1", async () => {
    const home = await tempHome();
    const gateway = await startGatewayProcess(home);
    const chat = startChat(["--url", gateway.url, "--give-up-after", "5"], home);
    // A watcher of the session: the run's end it is sent went to the chat's socket too, before the kill.
    const watcher = await connectGateway(gateway.url);
    const ends: unknown[] = [];
    watcher.onEvent((event, payload) => {
      if (event === "chat" && (payload as { state?: string }).state === "final") ends.push(payload);
    });
    await watcher.call("subscribe", { sessionKeys: ["main"] });
    // An answer first, its run ended: the chat is done with that line and reads its input when the gateway dies.
    chat.type("are you there");
    await expect.poll(chat.stdout, { timeout: 30_000 }).toContain("agent: Echo: are you there");
    await expect.poll(() => ends.length, { timeout: 30_000 }).toBe(1);
    // Stopped (SIGTERM), not killed: a SIGKILL's reset can drop the run's end still unread in the chat's socket.
    await stopGently(gateway);
    await watcher.close().catch(() => undefined);
    await expect.poll(chat.stdout, { timeout: 10_000 }).toContain("went away; reconnecting for up to 5 s");
    // Typed while it reconnects: 5 s leaves a loaded machine time to read the line before it gives up.
    chat.type("nobody hears this");
    expect(await chat.exit).toBe(1);
    expect(chat.stderr()).toContain(`the gateway at ${gateway.url} went away and did not come back within 5 s`);
    expect(chat.stderr()).toContain("not sent: nobody hears this");
    expect(chat.stdout()).not.toContain("[reconnected");
  }, 60_000);
});
