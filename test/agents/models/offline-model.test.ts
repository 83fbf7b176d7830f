import { generateText, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createOfflineModel, OFFLINE_MODEL_HELP } from "../../../src/agents/models/offline-model.js";
import { OFFLINE_GREETING } from "../../../src/agents/models/offline-reply.js";
import { BARE_RESET_PROMPT } from "../../../src/sessions/session-lifecycle.js";

const key = z.string().describe('a session key, e.g. "agent:main:main"');

function sessionTools(calls: Array<{ name: string; input: unknown }>) {
  const canned = {
    sessions_list: {
      count: 2,
      sessions: [
        { key: "agent:main:main", kind: "main" },
        { key: "agent:main:telegram:dm:42", kind: "direct" },
      ],
    },
    sessions_send: { runId: "r1", status: "ok", reply: "pong" },
    sessions_spawn: { status: "accepted", childSessionKey: "agent:main:subagent:1" },
    sessions_history: { sessionKey: "agent:main:main", messages: [] },
    agents_list: {
      requester: "main",
      allowAny: false,
      agents: [
        { id: "main", name: "Main", configured: true },
        { id: "ops", configured: true },
      ],
    },
  };
  const record =
    <T>(name: keyof typeof canned) =>
    async (input: T) => {
      calls.push({ name, input });
      return canned[name];
    };
  return {
    sessions_list: tool({ description: "List sessions.", inputSchema: z.object({}), execute: record("sessions_list") }),
    sessions_send: tool({
      description: "Send.",
      inputSchema: z.object({ sessionKey: key, message: z.string().describe("text") }),
      execute: record("sessions_send"),
    }),
    sessions_spawn: tool({
      description: "Spawn.",
      inputSchema: z.object({ task: z.string().describe("what to do") }),
      execute: record("sessions_spawn"),
    }),
    sessions_history: tool({
      description: "History.",
      inputSchema: z.object({ sessionKey: key }),
      execute: record("sessions_history"),
    }),
    agents_list: tool({ description: "Agents.", inputSchema: z.object({}), execute: record("agents_list") }),
  };
}

async function run(prompt: string, tools?: ReturnType<typeof sessionTools>, system?: string) {
  return generateText({
    model: createOfflineModel(),
    prompt,
    ...(tools && { tools }),
    ...(system && { system }),
    stopWhen: stepCountIs(4),
  });
}

describe("createOfflineModel", () => {
  it.each([
    [
      "list sessions",
      "sessions_list",
      {},
      "Sessions (2):\n- agent:main:main (main)\n- agent:main:telegram:dm:42 (direct)",
    ],
    ["List Sessions please", "sessions_list", {}, "Sessions (2):"],
    [
      "send to agent:main:main: ping there",
      "sessions_send",
      { sessionKey: "agent:main:main", message: "ping there" },
      'sessions_send: {"runId":"r1","status":"ok","reply":"pong"}',
    ],
    ["spawn: summarise the logs", "sessions_spawn", { task: "summarise the logs" }, "sessions_spawn: "],
    [
      "history agent:main:main",
      "sessions_history",
      { sessionKey: "agent:main:main" },
      'sessions_history: {"sessionKey":"agent:main:main"',
    ],
    ["agents", "agents_list", {}, "Agents (2):\n- main (Main)\n- ops"],
    ["list agents", "agents_list", {}, "Agents (2):"],
  ])("turns %j into a %s call and summarises its result", async (prompt, toolName, input, summary) => {
    const calls: Array<{ name: string; input: unknown }> = [];
    const result = await run(prompt, sessionTools(calls));
    expect(result.steps[0]!.toolCalls).toMatchObject([{ toolName, input }]);
    expect(calls).toEqual([{ name: toolName, input }]);
    expect(result.steps).toHaveLength(2);
    expect(result.text.startsWith(summary)).toBe(true);
    expect(result.finishReason).toBe("stop");
  });

  it("echoes any other message", async () => {
    const result = await run("  hello there  ", sessionTools([]));
    expect(result.text).toBe("Echo: hello there");
    expect(result.steps).toHaveLength(1);
  });

  it("greets a bare /new or /reset prompt", async () => {
    expect((await run(BARE_RESET_PROMPT, sessionTools([]))).text).toBe(OFFLINE_GREETING);
  });

  it("greets when a system prompt announces the new session before any answer", async () => {
    const result = await run("hi", undefined, "A new session was started via /new or /reset.");
    expect(result.text).toBe(OFFLINE_GREETING);
  });

  it("says a requested tool is not available when the call offers no such tool", async () => {
    const result = await run("list sessions");
    expect(result.text).toContain("sessions_list tool is not available here");
    expect(result.steps[0]!.toolCalls).toEqual([]);
  });

  it("reports a failing tool", async () => {
    const tools = {
      sessions_send: tool({
        inputSchema: z.object({ sessionKey: z.string(), message: z.string() }),
        execute: async (): Promise<string> => {
          throw new Error("Unknown session 'x'.");
        },
      }),
    };
    const result = await generateText({
      model: createOfflineModel(),
      prompt: "send to x: hi",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("sessions_send failed: Unknown session 'x'.");
  });

  it("cuts a long tool result to about 1,000 characters", async () => {
    const tools = {
      sessions_history: tool({
        inputSchema: z.object({ sessionKey: z.string() }),
        execute: async () => ({ text: "x".repeat(5_000) }),
      }),
    };
    const result = await generateText({
      model: createOfflineModel(),
      prompt: "history main",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(result.text.length).toBeLessThan(1_050);
    expect(result.text.endsWith("…")).toBe(true);
  });

  it("answers the same prompt with the same output and usage", async () => {
    const [a, b] = [await run("list sessions", sessionTools([])), await run("list sessions", sessionTools([]))];
    expect(b.text).toBe(a.text);
    expect(b.totalUsage).toEqual(a.totalUsage);
    expect(b.steps[0]!.toolCalls[0]!.toolCallId).toBe(a.steps[0]!.toolCalls[0]!.toolCallId);
  });

  it("counts words as tokens", async () => {
    const result = await run("hello there");
    expect(result.usage.outputTokens).toBe(3);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it("counts a prompt's words between any whitespace, as a split on \\s does", async () => {
    const system = "You are\ta helper.\n\nBe  brief.\u00a0Thanks\u3000again \u2028end";
    const prompt = " one  two three\u202ffour ";
    const result = await generateText({ model: createOfflineModel(), system, prompt });
    // The system text is counted as it is, the user's message as its JSON parts.
    const split = (text: string) => text.split(/\s+/).filter(Boolean).length;
    const expected = split(system) + split(JSON.stringify([{ type: "text", text: prompt }]));
    expect(result.usage.inputTokens).toBe(expected);
  });

  it("finds an announce step's result line anywhere in the system prompt", async () => {
    const result = await generateText({
      model: createOfflineModel(),
      system: "Some context.\nSub-agent result:  42 files \nMore context.",
      prompt: "Sub-agent announce step.",
    });
    expect(result.text).toBe("Result: 42 files\nNotes: answered by the offline model");
  });

  it("streams the same answers, tool calls included", async () => {
    const stream = streamText({
      model: createOfflineModel(),
      prompt: "list sessions",
      tools: sessionTools([]),
      stopWhen: stepCountIs(3),
    });
    expect(await stream.text).toBe("Sessions (2):\n- agent:main:main (main)\n- agent:main:telegram:dm:42 (direct)");
    expect(await streamText({ model: createOfflineModel(), prompt: "yo" }).text).toBe("Echo: yo");
  });

  it("rejects a call whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      generateText({ model: createOfflineModel(), prompt: "hi", abortSignal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
  });

  it("names itself offline/<id>", () => {
    const model = createOfflineModel("demo");
    expect([model.provider, model.modelId, model.specificationVersion]).toEqual(["offline", "demo", "v3"]);
    expect(createOfflineModel().modelId).toBe("echo");
  });
});

describe("OFFLINE_MODEL_HELP", () => {
  it("lists every phrase the offline model understands", () => {
    for (const phrase of [
      "list sessions",
      "send to <key>: <text>",
      "spawn: <task>",
      "history <key>",
      "list agents",
      "/new",
    ]) {
      expect(OFFLINE_MODEL_HELP).toContain(phrase);
    }
  });
});
