import { modelMessageSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PRUNED_TOOL_RESULT } from "../../src/agents/prune-tool-results.js";
import { runAgentTurn } from "../../src/agents/run-agent-turn.js";
import type { TranscriptMessage } from "../../src/sessions/transcripts/index.js";
import { createScriptedModel } from "../fakes/scripted-model.js";

const clock = () => {
  let t = 0;
  return () => ++t;
};

const weatherTool = (calls: unknown[] = []) =>
  tool({
    description: "Weather for a city.",
    inputSchema: z.object({ city: z.string().describe('a city, e.g. "Oslo"') }),
    execute: async (input) => {
      calls.push(input);
      return { city: input.city, temp: 20 };
    },
  });

const toolResultsSent = (prompt: ReturnType<typeof createScriptedModel>["prompts"][number]) =>
  prompt.flatMap((m) =>
    m.role === "tool" ? m.content.flatMap((p) => (p.type === "tool-result" ? [p.output] : [])) : [],
  );

describe("runAgentTurn", () => {
  it("sends the system prompt, the converted history and the prompt", async () => {
    const model = createScriptedModel([{ text: "hi back" }]);
    const history: TranscriptMessage[] = [
      { role: "system", content: "Session was reset.", timestamp: 1 },
      { role: "user", content: "earlier", timestamp: 2 },
      { role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 3 },
    ];
    const result = await runAgentTurn({ model, system: "You are Main.", history, prompt: "new", maxSteps: 4 });
    expect(result.text).toBe("hi back");
    expect(model.prompts[0]).toMatchObject([
      { role: "system", content: "You are Main.\n\nSession was reset." },
      { role: "user", content: [{ type: "text", text: "earlier" }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      { role: "user", content: [{ type: "text", text: "new" }] },
    ]);
    expect(model.prompts[0]).toHaveLength(4);
  });

  it("leaves the SDK's prompt check as strict as before once turns have run", async () => {
    await runAgentTurn({ model: createScriptedModel([{ text: "ok" }]), history: [], prompt: "hi", maxSteps: 1 });
    const check = z.array(modelMessageSchema);
    expect(check.safeParse([{ role: "user", content: "hi" }]).success).toBe(true);
    expect(check.safeParse([{ role: "robot", content: "hi" }]).success).toBe(false);
    expect(check.safeParse([{ role: "user", content: "hi", providerOptions: { x: { y: () => 1 } } }]).success).toBe(
      false,
    );
  });

  it("runs the tool loop: executes the tool, feeds the result back and returns the final text", async () => {
    const calls: unknown[] = [];
    const model = createScriptedModel([
      { toolCalls: [{ name: "weather", input: { city: "Oslo" } }] },
      { text: "Sunny, 20 degrees." },
    ]);
    const result = await runAgentTurn({
      model,
      history: [],
      prompt: "weather?",
      tools: { weather: weatherTool(calls) },
      maxSteps: 4,
      now: clock(),
    });
    expect(calls).toEqual([{ city: "Oslo" }]);
    expect(toolResultsSent(model.prompts[1]!)).toEqual([{ type: "json", value: { city: "Oslo", temp: 20 } }]);
    expect(result).toMatchObject({ text: "Sunny, 20 degrees.", finishReason: "stop", steps: 2 });
    expect(result.newMessages).toEqual([
      { role: "user", content: "weather?", timestamp: 1 },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "call_1_1", name: "weather", arguments: { city: "Oslo" } }],
        timestamp: 2,
        usage: { input: 10, output: 5, totalTokens: 15 },
      },
      {
        role: "toolResult",
        content: [
          { type: "toolResult", toolCallId: "call_1_1", toolName: "weather", content: { city: "Oslo", temp: 20 } },
        ],
        timestamp: 2,
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "Sunny, 20 degrees." }],
        timestamp: 3,
        usage: { input: 10, output: 5, totalTokens: 15 },
      },
    ]);
  });

  it("produces messages the next turn reads back as history", async () => {
    const first = await runAgentTurn({
      model: createScriptedModel([{ toolCalls: [{ name: "weather", input: { city: "Oslo" } }] }, { text: "Sunny." }]),
      history: [],
      prompt: "weather?",
      tools: { weather: weatherTool() },
      maxSteps: 4,
    });
    const model = createScriptedModel([{ text: "Still sunny." }]);
    await runAgentTurn({
      model,
      history: first.newMessages,
      prompt: "and now?",
      tools: { weather: weatherTool() },
      maxSteps: 4,
    });
    expect(model.prompts[0]!.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
  });

  it("stops after maxSteps model calls", async () => {
    const step = { toolCalls: [{ name: "weather", input: { city: "Oslo" } }] };
    const model = createScriptedModel([step, step, step]);
    const result = await runAgentTurn({
      model,
      history: [],
      prompt: "loop",
      tools: { weather: weatherTool() },
      maxSteps: 2,
    });
    expect(model.prompts).toHaveLength(2);
    expect(result).toMatchObject({ text: "", finishReason: "tool-calls", steps: 2 });
    expect(result.newMessages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "toolResult",
    ]);
  });

  it("sends only the newest tool results to the model and keeps them all in newMessages", async () => {
    const history: TranscriptMessage[] = ["h1", "h2", "h3"].flatMap((id): TranscriptMessage[] => [
      {
        role: "assistant",
        content: [{ type: "toolCall", id, name: "weather", arguments: { city: id } }],
        timestamp: 1,
      },
      { role: "toolResult", content: [{ type: "toolResult", toolCallId: id, content: `old ${id}` }], timestamp: 1 },
    ]);
    const before = structuredClone(history);
    const model = createScriptedModel([
      { toolCalls: [{ name: "weather", input: { city: "A" } }] },
      { toolCalls: [{ name: "weather", input: { city: "B" } }] },
      { text: "done" },
    ]);
    const result = await runAgentTurn({
      model,
      history,
      prompt: "go",
      tools: { weather: weatherTool() },
      maxSteps: 5,
      keepToolResults: 2,
    });
    const pruned = { type: "text", value: PRUNED_TOOL_RESULT };
    expect(toolResultsSent(model.prompts[0]!)).toEqual([
      pruned,
      { type: "text", value: "old h2" },
      { type: "text", value: "old h3" },
    ]);
    expect(toolResultsSent(model.prompts[2]!)).toEqual([
      pruned,
      pruned,
      pruned,
      { type: "json", value: { city: "A", temp: 20 } },
      { type: "json", value: { city: "B", temp: 20 } },
    ]);
    expect(history).toEqual(before);
    expect(result.newMessages.filter((m) => m.role === "toolResult")).toHaveLength(2);
  });

  it("rejects with an AbortError when the signal aborts during a model call", async () => {
    const controller = new AbortController();
    const model = createScriptedModel([{ text: "too late", delayMs: 10_000 }]);
    void expect
      .poll(() => model.prompts.length)
      .toBe(1)
      .then(() => controller.abort()); // once the call is under way
    await expect(
      runAgentTurn({ model, history: [], prompt: "slow", maxSteps: 2, signal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
  });

  it("stops before the next step when the signal aborts during a tool", async () => {
    const controller = new AbortController();
    const stopper = tool({
      inputSchema: z.object({}),
      execute: async () => {
        controller.abort();
        return "stopped";
      },
    });
    const model = createScriptedModel([{ toolCalls: [{ name: "stopper", input: {} }] }, { text: "never" }]);
    await expect(
      runAgentTurn({ model, history: [], prompt: "go", tools: { stopper }, maxSteps: 4, signal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(model.prompts).toHaveLength(1);
  });

  it("sums usage over all steps", async () => {
    const model = createScriptedModel([
      { toolCalls: [{ name: "weather", input: { city: "Oslo" } }], usage: { inputTokens: 10, outputTokens: 5 } },
      { text: "ok", usage: { inputTokens: 20, outputTokens: 7 } },
    ]);
    const result = await runAgentTurn({
      model,
      history: [],
      prompt: "go",
      tools: { weather: weatherTool() },
      maxSteps: 4,
    });
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 12, totalTokens: 42 });
  });

  it("records a failing tool as an error result and lets the model answer", async () => {
    const broken = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error("Unknown session 'x'.");
      },
    });
    const model = createScriptedModel([{ toolCalls: [{ name: "broken", input: {} }] }, { text: "That failed." }]);
    const result = await runAgentTurn({ model, history: [], prompt: "go", tools: { broken }, maxSteps: 4 });
    expect(result.newMessages[2]).toMatchObject({
      role: "toolResult",
      content: [{ type: "toolResult", toolName: "broken", content: "Unknown session 'x'.", isError: true }],
    });
    expect(toolResultsSent(model.prompts[1]!)).toEqual([{ type: "error-text", value: "Unknown session 'x'." }]);
    expect(result.text).toBe("That failed.");
  });

  it("records a call to a tool that does not exist as an error result", async () => {
    const model = createScriptedModel([{ toolCalls: [{ name: "nope", input: {} }] }, { text: "Sorry." }]);
    const result = await runAgentTurn({
      model,
      history: [],
      prompt: "go",
      tools: { weather: weatherTool() },
      maxSteps: 4,
    });
    expect(result.newMessages[2]).toMatchObject({
      role: "toolResult",
      content: [{ type: "toolResult", toolName: "nope", isError: true }],
    });
    expect(result.text).toBe("Sorry.");
  });
});

describe("createScriptedModel", () => {
  it("plays the script back through streaming calls too", async () => {
    const model = createScriptedModel([
      { toolCalls: [{ name: "weather", input: { city: "Oslo" } }] },
      { text: "Sunny." },
    ]);
    const stream = streamText({
      model,
      prompt: "weather?",
      tools: { weather: weatherTool() },
      stopWhen: stepCountIs(3),
    });
    expect(await stream.text).toBe("Sunny.");
    expect(model.prompts).toHaveLength(2);
  });

  it("fails a call past the end of the script", async () => {
    await expect(
      runAgentTurn({ model: createScriptedModel([]), history: [], prompt: "hi", maxSteps: 1 }),
    ).rejects.toThrow("scripted model has no step 1: the script has 0");
  });
});
