// The promise of docs/reliability.md for turns that are not platform messages, tried with real
// gateway processes and the real Telegram adapter on a fake Bot API: a webhook turn answered 202, a
// `/hooks/wake` turn and a gateway client's `agent` call are stored in their session's inbox, so a
// SIGKILL while they run loses none of them; after the restart each runs once (same run id) and the
// webhook's reply is announced once; the same idempotency keys then run nothing, across restarts too.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type GatewayChild, callChild, killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const HOOK_TOKEN = "hook-token-for-the-durability-test";

interface HookAnswer {
  ok: boolean;
  runId: string;
  sessionKey: string;
  duplicate?: boolean;
}

async function postHook(
  child: GatewayChild,
  path: string,
  body: unknown,
): Promise<{ status: number; body: HookAnswer }> {
  const response = await fetch(`${child.url.replace(/^ws/, "http")}/hooks${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as HookAnswer };
}

interface RunView {
  status: string;
  text?: string;
  error?: string;
}

const DEPLOY = { message: "deploy 7 finished", to: "telegram:111", idempotencyKey: "deploy-7" };
const AGENT_CALL = { message: "summarize the day", idempotencyKey: "agent-call-1" };
const sentTexts = (fake: FakeTelegramServer) => fake.sent.map((s) => s.text);

describe("turns that a webhook, /hooks/wake and a gateway client start", () => {
  it("survive a SIGKILL mid-run: each runs once after the restart, the webhook's reply is announced once, and their idempotency keys then run nothing", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_HOOK_TOKEN: HOOK_TOKEN };
    // First life: every model call hangs, so all three turns are mid-run when the process is killed.
    const slow = JSON.stringify(Array.from({ length: 3 }, () => ({ text: "never said", delayMs: 600_000 })));
    const first = await start("platform-gateway-process.ts", { ...env, SB_STEPS: slow });
    const hook = await postHook(first, "/agent", DEPLOY);
    expect(hook.status).toBe(202);
    expect(hook.body).toEqual({ ok: true, runId: expect.any(String), sessionKey: expect.stringMatching(/:hook:/) });
    const wake = await postHook(first, "/wake", { text: "new mail from bob", deliver: false });
    expect(wake.status).toBe(202);
    const agent = await callChild<{ runId: string; status: string }>(first, "agent", AGENT_CALL);
    expect(agent).toMatchObject({ runId: "agent-call-1", status: "accepted" });
    const runIds = [hook.body.runId, wake.body.runId, agent.runId];
    // Known to the run registry and not ended: the webhook and wake turns run (in the model), the
    // agent call waits behind the wake turn on the main session's lane.
    for (const runId of runIds)
      await until(async () => {
        const run = await callChild<RunView>(first, "agent.wait", { runId, timeoutMs: 0 });
        return /still (running|queued)/.test(run.error ?? "");
      });
    await killHard(first);

    // Second life (the echo model): the three stored turns are replayed under their run ids.
    const second = await start("platform-gateway-process.ts", env);
    const ended = await Promise.all(
      runIds.map((runId) => callChild<RunView>(second, "agent.wait", { runId, timeoutMs: 20_000 })),
    );
    expect(ended.map((run) => [run.status, run.text])).toEqual([
      ["ok", "Echo: deploy 7 finished"],
      ["ok", "Echo: System: new mail from bob"],
      ["ok", "Echo: summarize the day"],
    ]);
    await until(() => sentTexts(fake).includes("Echo: deploy 7 finished"));

    // The same idempotency keys after the restart: answered with the first run, nothing runs.
    const again = await postHook(second, "/agent", DEPLOY);
    expect(again).toEqual({ status: 202, body: { ...hook.body, duplicate: true } });
    const agentAgain = await callChild<Record<string, unknown>>(second, "agent", AGENT_CALL);
    expect(agentAgain).toMatchObject({ runId: "agent-call-1", status: "accepted", duplicate: true });
    await second.idle();
    expect(sentTexts(fake)).toEqual(["Echo: deploy 7 finished"]);
    const history = await callChild<{ messages: Array<{ role: string }> }>(second, "chat.history", {
      sessionKey: hook.body.sessionKey,
    });
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant"]);

    // The keys are on disk, not in memory: a third life still runs nothing for them.
    await killHard(second);
    const third = await start("platform-gateway-process.ts", env);
    expect(await postHook(third, "/agent", DEPLOY)).toEqual({ status: 202, body: { ...hook.body, duplicate: true } });
    await third.idle();
    expect(sentTexts(fake)).toEqual(["Echo: deploy 7 finished"]);
  }, 90_000);
});
