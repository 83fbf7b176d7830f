import { afterEach, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { recordedTools } from "../../src/agents/recorded-tools.js";
import { runAgentTurn } from "../../src/agents/run-agent-turn.js";
import { openToolRecord } from "../../src/agents/tool-record.js";
import { agentTools } from "../../src/tools/agent-tools.js";
import { MCP_AT_LEAST_ONCE } from "../../src/tools/mcp/mcp-manager.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { diceServer } from "../fakes/dice-server-config.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type TestGateway, useTestGateways } from "../support/test-gateway.js";
import { memoryStateAt } from "../support/memory-state.js";
import { type ToolHarness, createToolHarness } from "../support/tool-harness.js";
import { telegramDm } from "../support/telegram-dm.js";

const start = useTestGateways();
const TELEGRAM = { owners: ["42"] };
let seq = 0;
const dm = (text: string) => telegramDm(text, { messageId: `a${++seq}` });

async function send(gw: TestGateway, text: string) {
  const result = await gw.gateway.core.pipeline.handleInbound(dm(text));
  if (result.status === "queued") await result.done;
  return result;
}

const toolNames = (model: ReturnType<typeof createScriptedModel>, call: number) =>
  (model.calls[call]?.tools ?? []).map((t) => t.name);

describe("agentTools through the gateway", () => {
  it("lets the agent call an MCP server's tool as <server>__<tool> and answers with its result", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([
      { toolCalls: [{ name: "dice__roll", input: { sides: 6 } }] },
      { text: "You rolled a 4." },
    ]);
    const gw = await start({
      adapters: [fake],
      model,
      config: {
        channels: { telegram: TELEGRAM },
        agents: { defaults: { model: "test/m" } },
        mcp: { servers: { dice: diceServer() } },
      },
    });
    await send(gw, "roll a die");
    expect(toolNames(model, 0)).toContain("dice__roll");
    expect(JSON.stringify(model.prompts[1])).toContain("rolled 4 on a d6 (from-config)");
    expect(fake.texts()).toEqual(["You rolled a 4."]);
    expect(gw.gateway.core.mcpStatus()).toEqual([
      expect.objectContaining({ name: "dice", state: "connected", tools: ["dice__roll"] }),
    ]);
  }, 30_000);

  it("reports a server that exited in /status and the status method, and keeps answering turns without its tools", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([{ text: "still here" }, { text: "and again" }]);
    const gw = await start({
      adapters: [fake],
      model,
      config: {
        channels: { telegram: TELEGRAM },
        agents: { defaults: { model: "test/m" } },
        mcp: {
          reconnectDelayMs: 60_000,
          servers: { dice: diceServer("--exit-after-ms", "1000"), broken: { command: "/nonexistent/mcp" } },
        },
      },
    });
    await expect.poll(() => gw.gateway.core.mcpStatus()[0]!.state, { timeout: 10_000 }).toBe("failed");
    await send(gw, "hello?");
    expect(toolNames(model, 0)).not.toContain("dice__roll");
    const status = await send(gw, "/status");
    expect(status).toMatchObject({
      status: "command",
      reply: expect.stringMatching(
        /^MCP: dice failed: the server closed the connection · broken failed: could not start \(error id [0-9a-f]{8}; the gateway log has the details\)$/m,
      ),
    });
    // Configured MCP servers: /status says what a crash does to their calls.
    expect((status as { reply: string }).reply.split("\n")).toContain(MCP_AT_LEAST_ONCE);
    // The raw failure never reaches the chat; the log line with the same error id has it.
    expect(JSON.stringify(status)).not.toContain("ENOENT");
    const client = await gw.client();
    expect(await client.call<{ mcp: unknown }>("status", {})).toMatchObject({
      mcp: [
        { name: "dice", state: "failed" },
        { name: "broken", state: "failed" },
      ],
    });
    await send(gw, "again?");
    expect(fake.texts()).toEqual(["still here", expect.stringContaining("MCP: dice failed"), "and again"]);
  }, 30_000);

  it("applies tools.deny and an agent's tools.allow, with <server>__* naming every tool of a server", async () => {
    const model = createScriptedModel([{ text: "a" }, { text: "b" }]);
    const gw = await start({
      model,
      config: {
        agents: {
          defaults: { model: "test/m" },
          list: [{ id: "main" }, { id: "ops", tools: { allow: ["read", "list", "dice__*"] } }],
        },
        tools: { deny: ["sessions_send"] },
        mcp: { servers: { dice: diceServer() } },
      },
    });
    const { core } = gw.gateway;
    const main = core.toolDeps.toolNamesFor!("main");
    expect(main).toEqual([
      "sessions_list",
      "sessions_history",
      "sessions_spawn",
      "agents_list",
      "read",
      "write",
      "append",
      "edit",
      "list",
      "dice__roll",
    ]);
    expect(core.toolDeps.toolNamesFor!("ops")).toEqual(["read", "list", "dice__roll"]);
  }, 30_000);
});

let h: ToolHarness;
afterEach(async () => h?.close());

const FILES = ["read", "write", "append", "edit", "list"];

describe("agentTools in a recorded turn", () => {
  it("hands each call the id its run's record gave it, as ToolCaller.callId (sessions_spawn keeps it on the child)", async () => {
    h = await createToolHarness();
    const record = await openToolRecord({ state: memoryStateAt(randomUUID()), path: "tool-calls.json" });
    const tools = recordedTools(
      agentTools(h.deps, h.caller("agent:main:main", { owner: true })),
      record,
      "run-1",
      "agent:main:main",
    );
    const model = createScriptedModel([
      {
        toolCalls: [
          { name: "sessions_list", input: {} },
          { name: "sessions_spawn", input: { task: "count" } },
        ],
      },
      { text: "spawned" },
    ]);
    await runAgentTurn({ model, history: [], prompt: "go", maxSteps: 3, tools });
    expect(h.core.subagents.list("agent:main:main").map((r) => r.callId)).toEqual(["run-1:1"]);
    await expect.poll(() => h.core.subagents.list("agent:main:main")[0]?.state).toMatch(/announced|archived/);
  });
});

describe("agentTools for sub-agents", () => {
  it("gives a sub-agent the full set minus session tools by default, and its parent every tool", async () => {
    h = await createToolHarness();
    expect(Object.keys(agentTools(h.deps, h.caller("agent:main:subagent:abc", { owner: true })))).toEqual(FILES);
    expect(Object.keys(agentTools(h.deps, h.caller("agent:main:main", { owner: true })))).toEqual([
      "sessions_list",
      "sessions_history",
      "sessions_send",
      "sessions_spawn",
      "agents_list",
      ...FILES,
    ]);
  });

  it("gives a sub-agent exactly tools.subagents.tools.allow (never a session tool)", async () => {
    h = await createToolHarness({
      config: { tools: { subagents: { tools: { allow: ["read", "list", "sessions_send"] } } } },
    });
    expect(Object.keys(agentTools(h.deps, h.caller("agent:main:subagent:abc", { owner: true })))).toEqual([
      "read",
      "list",
    ]);
  });

  it("never gives a child of another agent more than its parent's agent may use", async () => {
    h = await createToolHarness({
      config: {
        agents: {
          list: [
            { id: "main", tools: { deny: ["write", "edit"] }, subagents: { allowAgents: ["wide"] } },
            { id: "wide" },
          ],
        },
      },
    });
    const deps = {
      ...h.deps,
      parentAgentOf: (child: string) => (child === "agent:wide:subagent:x" ? "main" : undefined),
    };
    expect(Object.keys(agentTools(deps, h.caller("agent:wide:subagent:x", { owner: true })))).toEqual(["read", "list"]);
    expect(Object.keys(agentTools(deps, h.caller("agent:wide:main", { owner: true })))).toContain("write");
  });

  it("shows each agent's effective tools in agents_list", async () => {
    h = await createToolHarness({ config: { agents: { list: [{ id: "main", tools: { deny: ["sessions_*"] } }] } } });
    expect(await h.invoke("agents_list", {}, h.caller("agent:main:main"))).toMatchObject({
      agents: [{ id: "main", tools: ["agents_list", ...FILES] }],
    });
  });
});
