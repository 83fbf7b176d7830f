import { describe, expect, it } from "vitest";
import { SwitchboardError } from "../../../src/errors.js";
import type { OutboxItem } from "../../../src/delivery/outbox-item.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";
const HOUR = 3_600_000;

function failure(h: Awaited<ReturnType<typeof createCommandHarness>>): OutboxItem {
  const at = h.clock.now() - 5 * 60_000;
  return {
    id: "r1:reply",
    seq: 1,
    sessionKey: KEY,
    target: { channel: "telegram", to: "42" },
    kind: "reply",
    chunks: ["hi"],
    sent: 0,
    messageIds: [],
    status: "failed",
    attempts: 3,
    nextAttemptAt: at,
    lastError: { reason: "chat_not_found", message: "fake: chat not found" },
    createdAt: at,
    updatedAt: at,
  };
}

describe("statusCommand", () => {
  it("describes a session that has not run yet", async () => {
    const h = await createCommandHarness();
    const reply = (await h.dispatch(dm("42", "/status")))?.reply;
    expect(reply?.split("\n")).toEqual([
      "Model: offline/echo",
      "Thinking: off · Verbose: off",
      `Session: ${KEY} · no activity yet`,
      "Send policy: allow (session.sendPolicy.default: allow)",
      "Queue: idle, 0 waiting (followup)",
      "Sub-agents: 0 running, 0 ended",
      "Delivery failures: none",
      "Reset: daily at 04:00",
    ]);
  });

  it("shows model, usage, age, override, queue, sub-agents, failures and expiry of a busy session", async () => {
    const h = await createCommandHarness({
      offline: true,
      config: { session: { reset: { mode: "idle", idleMinutes: 120 } } },
      steps: [{ text: "never", delayMs: 5_000 }],
      subagents: [
        {
          runId: "run-a",
          childSessionKey: "agent:main:subagent:a",
          label: "research",
          task: "look it up",
          status: "running",
          startedAt: 0,
        },
        {
          runId: "run-b",
          childSessionKey: "agent:main:subagent:b",
          task: "sum",
          status: "ok",
          startedAt: 0,
          endedAt: 1_700_000_000_000 - 2 * HOUR,
        },
      ],
    });
    await h.seed(
      KEY,
      {
        inputTokens: 1234,
        outputTokens: 56,
        compactionCount: 2,
        sendPolicy: "deny",
        createdAt: h.clock.now() - 3 * HOUR,
        updatedAt: h.clock.now() - 30 * 60_000,
      },
      [
        { role: "user", content: "hello there" },
        { role: "assistant", content: "hi, how can I help?" },
      ],
    );
    h.failures.push(failure(h));
    const parsed = h.context(dm("42", "x")).sessionKey;
    const run = h.runtime.enqueue({ parsed, agentId: "main", prompt: "think", deliver: false });
    h.runtime.enqueue({ parsed, agentId: "main", prompt: "next", deliver: false });
    await expect.poll(() => h.model.calls.length).toBe(1);
    const lines = (await h.dispatch(dm("42", "/status")))!.reply!.split("\n");
    expect(lines[0]).toBe("Model: offline/echo (the built-in offline model: no network, deterministic answers)");
    expect(lines[1]).toMatch(
      /^Tokens \(last turn\): 1\.2k in \/ 56 out · Context: ~\d+ of 32k tokens in 3 messages · Compactions: 2$/,
    );
    expect(lines[2]).toBe("Thinking: off · Verbose: off");
    expect(lines[3]).toMatch(new RegExp(`^Session: ${KEY} · id sess-\\S+ · started 3h ago · last turn just now$`));
    expect(lines.slice(4)).toEqual([
      "Send policy: deny (this session's /send override)",
      "Queue: a turn is running, 1 waiting (followup)",
      "Sub-agents: 1 running (research), 1 ended (last ok 2h ago)",
      "Delivery failures: 1",
      "  5m ago: reply to telegram:42: chat_not_found (fake: chat not found)",
      "Reset: after 120 idle minutes · this session expires in 2h",
    ]);
    h.runtime.abortSession(KEY);
    await run.done;
  });

  it("shows replies still waiting to be delivered, with their tries, next try and last error", async () => {
    const h = await createCommandHarness();
    const base = failure(h);
    h.failures.push(
      {
        ...base,
        id: "r2:reply",
        status: "pending",
        attempts: 7,
        createdAt: h.clock.now() - 10 * 60_000,
        nextAttemptAt: h.clock.now() + 30_000,
        lastError: { reason: "network", message: "Telegram unreachable: Network request failed" },
      },
      { ...base, id: "r3:reply", status: "pending", attempts: 0, nextAttemptAt: h.clock.now() },
    );
    const lines = (await h.dispatch(dm("42", "/status")))!.reply!.split("\n");
    const at = lines.indexOf("Delivery pending: 2 (1 retrying)");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      "  reply to telegram:42: 7 failed tries since 10m ago, next in 30s: network (Telegram unreachable: Network request failed)",
      "Delivery failures: none",
    ]);
  });

  it("says an account of this chat is send-only when another gateway holds it (cluster.owners many)", async () => {
    const h = await createCommandHarness({
      accountHealth: (channel, accountId) =>
        channel === "telegram" && accountId === "default" ? { connected: true, sendOnly: true } : undefined,
    });
    const reply = (await h.dispatch(dm("42", "/status")))?.reply;
    expect(reply?.split("\n")).toContain("Channel: telegram account default: send-only (another gateway receives it)");
  });

  it("says when a session has expired", async () => {
    const h = await createCommandHarness({ config: { session: { reset: { mode: "idle", idleMinutes: 10 } } } });
    await h.seed(KEY, { updatedAt: h.clock.now() - HOUR });
    const reply = (await h.dispatch(dm("42", "/status")))!.reply!;
    expect(reply).toContain(
      "Reset: after 10 idle minutes · this session expired (idle); the next message starts a new one",
    );
    expect(reply).toContain("last turn 1h ago");
  });

  it("shows an error id, not the raw message, when building the model hits a bug, and logs the whole error", async () => {
    const h = await createCommandHarness({
      resolveModel: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'apiKey') at /srv/secret/path.js");
      },
    });
    const line = (await h.dispatch(dm("42", "/status")))!.reply!.split("\n")[0]!;
    expect(line).toMatch(
      /^Model: offline\/echo \(cannot run: Sorry, something went wrong on my side \(error id [0-9a-f]{8}\)\.\)$/,
    );
    expect(line).not.toContain("apiKey");
    const errorId = /error id ([0-9a-f]{8})/.exec(line)![1];
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        fields: expect.objectContaining({
          errorId,
          err: expect.objectContaining({ message: expect.stringContaining("apiKey") }),
        }),
      }),
    );
  });

  it("says a known error's own message when the session's model cannot be built", async () => {
    const h = await createCommandHarness({
      resolveModel: () => {
        throw new SwitchboardError("INVALID_ARGUMENT", 'Unknown model provider "acme" in "acme/x".');
      },
    });
    const line = (await h.dispatch(dm("42", "/status")))!.reply!.split("\n")[0]!;
    expect(line).toBe('Model: offline/echo (cannot run: Unknown model provider "acme" in "acme/x".)');
  });
});
