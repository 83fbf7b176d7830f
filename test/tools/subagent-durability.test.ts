import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../support/test-gateway.js";

const script = path.resolve(import.meta.dirname, "../fakes/gateway-process.ts");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function startProcess(home: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, SB_HOME: home, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("url ") && resolve(child));
    child.once("exit", (code) => reject(new Error(`gateway process exited early (${code})`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

async function sent(home: string): Promise<Array<{ target: { to: string; threadId?: string }; text: string }>> {
  const text = await readFile(path.join(home, "sent.jsonl"), "utf8").catch(() => "");
  return text.trim() ? text.trim().split("\n").map((l) => JSON.parse(l)) : [];
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("sub-agent announces across a SIGKILL", () => {
  it("delivers an announce exactly once when the gateway is killed while delivering it", async () => {
    const home = await tempHome();
    const steps = JSON.stringify([{ text: "X found" }, { text: "Result: X found\nNotes: none" }]);
    const first = await startProcess(home, { SB_INJECT: "1", SB_WORKER_STEPS: steps, SB_ANNOUNCE_DELAY: "60000" });
    await until(async () => (await readFile(path.join(home, "state", "outbox.json"), "utf8").catch(() => "")).includes('"announce:'));
    await kill(first);
    expect((await sent(home)).filter((s) => s.text.includes("Status:"))).toEqual([]);

    await startProcess(home, { SB_WORKER_STEPS: "[]" });
    await until(async () => (await sent(home)).some((s) => s.text.includes("Status:")));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const announces = (await sent(home)).filter((s) => s.text.includes("Status:"));
    expect(announces).toHaveLength(1);
    expect(announces[0]).toMatchObject({ target: { to: "-100", threadId: "7" } });
    expect(announces[0]!.text).toContain("Status: success\n\nResult:\nX found");
  }, 60_000);

  it("announces a run that a restart orphaned as an error with the reason", async () => {
    const home = await tempHome();
    const first = await startProcess(home, { SB_INJECT: "1", SB_WORKER_STEPS: JSON.stringify([{ text: "never", delayMs: 60_000 }]) });
    await until(async () => (await readFile(path.join(home, "state", "subagents.json"), "utf8").catch(() => "")).includes('"running"'));
    await kill(first);

    await startProcess(home, { SB_WORKER_STEPS: JSON.stringify([{ text: "Result: nothing to report" }]) });
    await until(async () => (await sent(home)).some((s) => s.text.includes("Status:")));
    const [announce] = (await sent(home)).filter((s) => s.text.includes("Status:"));
    expect(announce!.text).toContain("Status: error");
    expect(announce!.text).toContain("- Error: the gateway restarted while this sub-agent was running");
    expect(announce!.target).toMatchObject({ to: "-100", threadId: "7" });
  }, 60_000);
});
