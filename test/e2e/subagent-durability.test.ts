// Sub-agent announces across a SIGKILL of a real gateway process, on each state backend: the
// announce's outbox row decides what is sent again after the restart.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { gatewayCall, killHard as kill, until, useGatewayChildren } from "../support/gateway-child.js";
import { type BackendHome, describeBackends } from "../support/state-backends.js";

const start = useGatewayChildren();
const startProcess = (at: BackendHome, env: Record<string, string>) =>
  start("gateway-process.ts", { SB_HOME: at.home, ...at.env, ...env });

async function sent(at: BackendHome): Promise<Array<{ target: { to: string; threadId?: string }; text: string }>> {
  const text = await readFile(path.join(at.home, "sent.jsonl"), "utf8").catch(() => "");
  return text.trim()
    ? text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    : [];
}

async function announceRow(at: BackendHome): Promise<{ status: string } | undefined> {
  const rows = await at.rows("outbox");
  return Object.entries(rows).find(([id]) => id.startsWith("announce:"))?.[1] as { status: string } | undefined;
}

/** A gateway that spawned a sub-agent, SIGKILLed while it runs: the stored run is left behind for the next start. */
async function orphanRun(at: BackendHome): Promise<void> {
  const first = await startProcess(at, {
    SB_INJECT: "1",
    SB_WORKER_STEPS: JSON.stringify([{ text: "never", delayMs: 60_000 }]),
  });
  // Killed once the sub-agent's run started (its record no longer queued) and the turn that spawned
  // it has ended (its message handled); the spawn, a stored turn of the child, is pending until the
  // child ends: its replay finds the run started and leaves it to the recovery.
  await until(
    async () =>
      Object.values(await at.rows("subagents")).some((row) => row.state === "running" && !row.queued) &&
      Object.entries(await at.rows("inbox")).every(([key, row]) => key.startsWith("spawn:") || row.status === "done"),
  );
  await kill(first);
}

describeBackends("sub-agent announces across a SIGKILL", (backend) => {
  it("delivers an announce exactly once when the gateway is killed while delivering it", async () => {
    const at = await backend.home();
    const steps = JSON.stringify([{ text: "X found" }, { text: "Result: X found\nNotes: none" }]);
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: steps, SB_ANNOUNCE_DELAY: "60000" });
    await until(async () => (await announceRow(at)) !== undefined);
    await kill(first);
    expect((await sent(at)).filter((s) => s.text.includes("Status:"))).toEqual([]);

    const second = await startProcess(at, { SB_WORKER_STEPS: "[]" });
    await until(async () => (await sent(at)).some((s) => s.text.includes("Status:")));
    await second.idle();
    const announces = (await sent(at)).filter((s) => s.text.includes("Status:"));
    expect(announces).toHaveLength(1);
    expect(announces[0]).toMatchObject({ target: { to: "-100", threadId: "7" } });
    expect(announces[0]!.text).toContain("Status: success\n\nResult:\nX found");
  }, 60_000);

  it("resends once (at least once) an announce the platform got but the killed gateway never recorded, and logs it", async () => {
    const at = await backend.home();
    const steps = JSON.stringify([{ text: "X found" }, { text: "Result: X found" }]);
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: steps, SB_ANNOUNCE_HOLD: "60000" });
    await until(async () => (await sent(at)).some((s) => s.text.includes("Status:")));
    await kill(first);

    const second = await startProcess(at, { SB_WORKER_STEPS: "[]" });
    await until(async () => (await sent(at)).filter((s) => s.text.includes("Status:")).length === 2);
    await until(async () => (await announceRow(at))?.status === "delivered");
    expect(second.stderr()).toContain("it may arrive twice");
    await second.idle();
    expect((await sent(at)).filter((s) => s.text.includes("Status:"))).toHaveLength(2);
  }, 60_000);

  it("delivers such an announce exactly once to a platform that drops a repeated idempotency key", async () => {
    const at = await backend.home();
    const steps = JSON.stringify([{ text: "X found" }, { text: "Result: X found" }]);
    const first = await startProcess(at, {
      SB_INJECT: "1",
      SB_WORKER_STEPS: steps,
      SB_ANNOUNCE_HOLD: "60000",
      SB_DEDUPE: "1",
    });
    await until(async () => (await sent(at)).some((s) => s.text.includes("Status:")));
    await kill(first);

    const second = await startProcess(at, { SB_WORKER_STEPS: "[]", SB_DEDUPE: "1" });
    await until(async () => (await announceRow(at))?.status === "delivered");
    await second.idle();
    expect((await sent(at)).filter((s) => s.text.includes("Status:"))).toHaveLength(1);
  }, 60_000);

  it("announces a run that a restart orphaned as an error with the reason", async () => {
    const at = await backend.home();
    await orphanRun(at);

    await startProcess(at, { SB_WORKER_STEPS: JSON.stringify([{ text: "Result: nothing to report" }]) });
    await until(async () => (await sent(at)).some((s) => s.text.includes("Status:")));
    const [announce] = (await sent(at)).filter((s) => s.text.includes("Status:"));
    expect(announce!.text).toContain("Status: error");
    expect(announce!.text).toContain("- Error: the gateway restarted while this sub-agent was running");
    expect(announce!.target).toMatchObject({ to: "-100", threadId: "7" });
  }, 60_000);

  it("is ready while it still announces a run a restart orphaned: the announce's turn holds up no start", async () => {
    const at = await backend.home();
    await orphanRun(at);

    // The announce asks the child for its Result in a model step of 60 s: the start waits for none of it.
    const second = await startProcess(at, {
      SB_WORKER_STEPS: JSON.stringify([{ text: "Result: late", delayMs: 60_000 }]),
    });
    const health = await gatewayCall<{ ready: boolean }>(second.url, "health");
    expect(health?.ready).toBe(true);
    // Recovery has begun (the run is marked ended as an error) and its announce is not sent yet.
    await until(async () => Object.values(await at.rows("subagents")).some((row) => row.state === "ended"));
    expect((await sent(at)).filter((s) => s.text.includes("Status:"))).toEqual([]);
  }, 60_000);

  it("stops within its drain budget while the recovery's announce turn still runs, and the next start announces the run once", async () => {
    const at = await backend.home();
    await orphanRun(at);
    // The recovery's announce asks the child for its Result in a model step of 60 s.
    const second = await startProcess(at, {
      SB_WORKER_STEPS: JSON.stringify([{ text: "Result: late", delayMs: 60_000 }]),
    });
    await until(async () => Object.values(await at.rows("subagents")).some((row) => row.state === "ended"));
    const exited = new Promise<number | null>((resolve) => second.process.once("exit", resolve));
    const stoppedAt = Date.now();
    second.process.kill("SIGTERM");
    // The stop's drain budget is 10 s; the announce's model step (60 s) holds it no longer than that.
    expect(await exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(30_000);
    expect((await sent(at)).filter((s) => s.text.includes("Status:"))).toEqual([]);

    const third = await startProcess(at, { SB_WORKER_STEPS: JSON.stringify([{ text: "Result: nothing to report" }]) });
    await until(async () => (await sent(at)).some((s) => s.text.includes("Status:")));
    await third.idle();
    const announces = (await sent(at)).filter((s) => s.text.includes("Status:"));
    expect(announces).toHaveLength(1);
    expect(announces[0]!.text).toContain("Status: error");
  }, 90_000);
});
