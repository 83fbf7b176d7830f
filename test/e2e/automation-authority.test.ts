// Whose authority an automated turn's session tools carry: cron jobs an owner's, webhooks a guest's.
import { describe, expect, it } from "vitest";
import type { CronJob } from "../../src/cron/cron-job.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const TOKEN = "hook-token-0123456789";
const listThenAnswer = () =>
  createScriptedModel([{ text: "hello" }, { toolCalls: [{ name: "sessions_list", input: {} }] }, { text: "listed" }]);

async function toolResultsOf(
  client: Awaited<ReturnType<Awaited<ReturnType<typeof start>>["client"]>>,
  sessionKey: string,
): Promise<string> {
  const { messages } = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
    sessionKey,
    includeTools: true,
  });
  return JSON.stringify(messages.filter((m) => m.role === "toolResult"));
}

describe("automated turns and session tools", () => {
  it("lets a cron job's tools see the agent's sessions, as its owner would", async () => {
    const gw = await start({ model: listThenAnswer() });
    const client = await gw.client();
    await client.call("agent.wait", {
      runId: (await client.call<{ runId: string }>("agent", { message: "hi" })).runId,
    });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "audit",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "list sessions",
    });
    const { runId } = await client.call<{ runId: string }>("cron.run", { id: job.id });
    await client.call("agent.wait", { runId });
    expect(await toolResultsOf(client, `agent:main:cron:${job.id}`)).toContain(`"key":"main"`);
  });

  it("keeps a webhook turn's tools to its own session, as for a guest", async () => {
    const gw = await start({ model: listThenAnswer(), config: { hooks: { enabled: true, token: TOKEN } } });
    const client = await gw.client();
    await client.call("agent.wait", {
      runId: (await client.call<{ runId: string }>("agent", { message: "hi" })).runId,
    });
    const response = await fetch(`${gw.gateway.url.replace(/^ws/, "http")}/hooks/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "list sessions", deliver: false }),
    });
    const { runId, sessionKey } = (await response.json()) as { runId: string; sessionKey: string };
    await client.call("agent.wait", { runId });
    const results = await toolResultsOf(client, sessionKey);
    expect(results).toContain("sessions_list");
    expect(results).not.toContain(`"key":"main"`);
  });
});
