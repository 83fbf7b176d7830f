// The `sessions_send` wait across a takeover (docs/scale-out.md "Durable run results"): two real
// gateway processes on one PostgreSQL schema. The owner is SIGKILLed once the target's reply is
// committed (with its `run_results` row) and before the waiting caller heard of it; the new owner
// replays both turns, the caller's model step held until the target's inbox entry is done, so the
// caller's call (the same call id) finds the target turn done and answers its reply from the run's
// end instead of `accepted` (what it answered before).
import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { GatewayClient } from "../../src/cli/gateway-client.js";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, client } = useClusterClients();
const gates: string[] = [];
afterEach(() => Promise.all(gates.splice(0).map((gate) => rm(gate, { force: true }))));

const CALLER = "agent:main:webchat:dm:caller";
const TARGET = "agent:main:webchat:dm:ops";
const SEND = {
  toolCalls: [{ name: "sessions_send", input: { sessionKey: TARGET, message: "ping", timeoutSeconds: 30 } }],
};
/** `callerGate`: the caller's first step waits until this file exists (the new owner's replay: the target ends first). */
const play = (callerGate?: string, then = { text: "sent it" }): PlaybookRule[] => [
  { when: "Agent-to-agent announce step", first: { text: "ANNOUNCE_SKIP" } },
  { when: "Agent-to-agent message context", first: { text: "pong from ops" } },
  { when: "hello ops", first: { text: "ops here" } },
  {
    when: "please send",
    first: { ...SEND, ...(callerGate && { waitForFile: callerGate }) },
    then,
  },
];

/** The outputs of the caller's `sessions_send` calls, as its transcript holds them. */
async function sendOutputs(on: GatewayClient): Promise<string[]> {
  const history = await on.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
    sessionKey: CALLER,
    includeTools: true,
  });
  return history.messages.filter((m) => m.role === "toolResult").map((m) => JSON.stringify(m.content));
}

describe("sessions_send across a takeover", () => {
  it("answers the target's reply, not accepted, on the new owner when the target turn ended before the caller's replayed call asked", async () => {
    const fake = await fakeTelegram();
    const gate = path.join(os.tmpdir(), `sb-caller-gate-${randomUUID()}`);
    gates.push(gate);
    const cluster = await startCluster({
      size: 2,
      cluster: { leaseTtlMs: 60_000, heartbeatMs: 1_000 },
      env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(play()) },
      envOf: {
        // The first owner dies once the batch carrying the target's reply (and its run's end) committed.
        "gw-1": { SB_KILL_AT_TURN_COMMIT: JSON.stringify({ n: 1, at: "acked", text: "pong from ops" }) },
        // The new owner's replay of the caller reaches its call once the test saw the target's entry done.
        "gw-2": { SB_PLAY: JSON.stringify(play(gate)) },
      },
      config: { session: { agentToAgent: { maxPingPongTurns: 0 } } },
    });
    const first = await cluster.owner();
    const onFirst = await client(first.port);
    const hello = await onFirst.call<{ runId: string }>("chat.send", { sessionKey: TARGET, message: "hello ops" });
    await onFirst.call("agent.wait", { runId: hello.runId, timeoutMs: 30_000 });
    const { runId } = await onFirst.call<{ runId: string }>("chat.send", {
      sessionKey: CALLER,
      message: "please send",
    });
    expect((await first.exited).signal).toBe("SIGKILL");
    const ended = await cluster.query<{ text: string }>(
      "SELECT text FROM run_results WHERE session_key = $1 AND status = 'ok' AND text = 'pong from ops'",
      [TARGET],
    );
    expect(ended, "the target's end was committed before the kill").toHaveLength(1);

    const second = await cluster.owner({ not: first });
    // The target's entry: the only turn a tool stored (its key is `tool:<call id>`).
    const targetDone = async () =>
      (await cluster.rows("inbox")).some((r) => r.key.startsWith("tool:") && r.value.status === "done");
    await until(targetDone, 30_000);
    await writeFile(gate, "");
    const onSecond = await client(second.port);
    const waited = await onSecond.call<{ status: string; text?: string }>("agent.wait", { runId, timeoutMs: 30_000 });
    expect(waited).toMatchObject({ status: "ok", text: "sent it" });
    const outputs = await sendOutputs(onSecond);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toContain('"status":"ok"');
    expect(outputs[0]).toContain('"reply":"pong from ops"');
    const pings = await cluster.query("SELECT 1 FROM run_results WHERE session_key = $1 AND text = 'pong from ops'", [
      TARGET,
    ]);
    expect(pings, "the target ran the message once").toHaveLength(1);
  }, 120_000);
});
