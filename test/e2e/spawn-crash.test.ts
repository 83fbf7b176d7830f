// A spawn and an announce are stored turns (docs/scale-out.md "The way there", step 5): a real
// gateway process SIGKILLed right after the spawn is stored in the child's inbox (before the child
// ran), or between the child's end and its announce, on each state backend: after the restart the
// child runs once and its announce reaches the chat exactly once. And a stop of the running child
// SIGKILLed right after its abort was stored in the child's inbox, before that ran: the child is
// recorded stopped once, not run again, not announced.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { type GatewayChild, callChild, until, useGatewayChildren } from "../support/gateway-child.js";
import { type BackendHome, describeBackends } from "../support/state-backends.js";

const start = useGatewayChildren();
const startProcess = (at: BackendHome, env: Record<string, string>) =>
  start("gateway-process.ts", { SB_HOME: at.home, ...at.env, ...env });

async function lines<T>(at: BackendHome, file: string): Promise<T[]> {
  const text = await readFile(path.join(at.home, file), "utf8").catch(() => "");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/** The announces the chat got. */
const announces = async (at: BackendHome) =>
  (await lines<{ target: { to: string; threadId?: string }; text: string }>(at, "sent.jsonl")).filter((s) =>
    s.text.includes("Status:"),
  );
/** The worker's model calls: "task" (the child's run) or "announce" (its announce step). */
const workerCalls = (at: BackendHome) => lines<string>(at, "worker-calls.jsonl");

/** How the child's process ended (at once when it already has). */
const exitOf = (child: GatewayChild) =>
  child.process.exitCode !== null || child.process.signalCode !== null
    ? Promise.resolve(child.process.signalCode)
    : new Promise<NodeJS.Signals | null>((resolve) => child.process.once("exit", (_code, signal) => resolve(signal)));

/** The inbox rows of the stored turns of `source` (their dedupe keys start with it; a done row keeps only its key). */
async function storedTurns(at: BackendHome, source: string) {
  const rows = Object.entries(await at.rows("inbox"));
  return rows.filter(([key]) => key.startsWith(`${source}:`)).map(([, row]) => row);
}

/** Waits for the restarted gateway's announce and its run marked announced; the chat got it once, as a success. */
async function announcedOnce(at: BackendHome, gateway: GatewayChild): Promise<void> {
  await until(async () => (await announces(at)).length > 0);
  await gateway.idle();
  await until(async () => Object.values(await at.rows("subagents")).every((row) => row.state === "announced"));
  const sent = await announces(at);
  expect(sent).toHaveLength(1);
  expect(sent[0]!.text).toContain("Status: success\n\nResult:\nX found");
  expect(sent[0]!.target).toMatchObject({ to: "-100", threadId: "7" });
}

const STEPS = JSON.stringify([{ text: "X found" }, { text: "Result: X found\nNotes: none" }]);

describeBackends("a spawn and an announce across a SIGKILL", (backend) => {
  it("runs a child stored but not started before the kill once after the restart, and announces it once", async () => {
    const at = await backend.home();
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: "[]", SB_KILL_AT_STORED: "spawn" });
    expect(await exitOf(first)).toBe("SIGKILL");
    expect(await storedTurns(at, "spawn")).toMatchObject([{ status: "pending" }]);
    expect(await workerCalls(at)).toEqual([]);

    // The requester's turn is replayed too: its sessions_spawn call finds the stored spawn (same call id).
    const second = await startProcess(at, { SB_WORKER_STEPS: STEPS });
    await announcedOnce(at, second);
    expect(await workerCalls(at)).toEqual(["task", "announce"]);
    expect(Object.values(await at.rows("subagents"))).toMatchObject([{ state: "announced", outcome: "success" }]);
    expect(await storedTurns(at, "spawn")).toMatchObject([{ status: "done" }]);
  }, 60_000);

  it("announces once a child killed after its announce was stored in the requester's inbox, before that ran", async () => {
    const at = await backend.home();
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: STEPS, SB_KILL_AT_STORED: "announce" });
    expect(await exitOf(first)).toBe("SIGKILL");
    expect(await storedTurns(at, "announce")).toMatchObject([{ status: "pending" }]);
    expect(await announces(at)).toEqual([]);

    // Nothing left for the worker: the child does not run again, nor its announce step.
    const second = await startProcess(at, { SB_WORKER_STEPS: "[]" });
    await announcedOnce(at, second);
    expect(await workerCalls(at)).toEqual(["task", "announce"]);
  }, 60_000);

  it("announces once a child killed between its end and its announce (the announce step running)", async () => {
    const at = await backend.home();
    const slowAnnounce = JSON.stringify([{ text: "X found" }, { text: "never", delayMs: 60_000 }]);
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: slowAnnounce });
    await until(async () => (await workerCalls(at)).includes("announce"));
    expect(Object.values(await at.rows("subagents"))).toMatchObject([{ state: "ended" }]);
    first.process.kill("SIGKILL");
    await exitOf(first);

    const second = await startProcess(at, { SB_WORKER_STEPS: JSON.stringify([{ text: "Result: X found" }]) });
    await announcedOnce(at, second);
    // The child's task ran once (before the kill); its announce step was cut off and asked again.
    expect(await workerCalls(at)).toEqual(["task", "announce", "announce"]);
  }, 60_000);

  it("records a child stopped once, not run again and not announced, when killed after its abort was stored, before that ran", async () => {
    const at = await backend.home();
    const long = JSON.stringify([{ text: "late", delayMs: 60_000 }]);
    const first = await startProcess(at, { SB_INJECT: "1", SB_WORKER_STEPS: long, SB_KILL_AT_STORED: "abort" });
    await until(async () => (await workerCalls(at)).includes("task"));
    const [running] = Object.values(await at.rows("subagents"));
    // The call dies with the process: the gateway is killed right after the abort is stored.
    await callChild(first, "subagents.stop", { sessionKey: running!.requesterKey }).catch(() => undefined);
    expect(await exitOf(first)).toBe("SIGKILL");
    expect(await storedTurns(at, "abort")).toMatchObject([{ status: "pending" }]);
    expect(Object.values(await at.rows("subagents"))).toMatchObject([
      { state: "running", stopAskedAt: expect.any(Number) },
    ]);

    const second = await startProcess(at, { SB_WORKER_STEPS: "[]" });
    await until(async () => (await storedTurns(at, "abort")).every((row) => row.status === "done"));
    await until(async () => Object.values(await at.rows("subagents")).every((row) => row.state === "announced"));
    await second.idle();
    expect(Object.values(await at.rows("subagents"))).toMatchObject([{ state: "announced", outcome: "stopped" }]);
    expect(await workerCalls(at)).toEqual(["task"]);
    expect(await announces(at)).toEqual([]);
    expect(await storedTurns(at, "spawn")).toMatchObject([{ status: "done" }]);
  }, 60_000);
});
