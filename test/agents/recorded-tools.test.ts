import { randomUUID } from "node:crypto";
import { type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callIdOf, recordedTools } from "../../src/agents/recorded-tools.js";
import { runAgentTurn } from "../../src/agents/run-agent-turn.js";
import { type ToolRecord, openToolRecord } from "../../src/agents/tool-record.js";
import { type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { memoryStateAt } from "../support/memory-state.js";

/** A tool with a side effect the test counts: each execution appends to `effects` and sees its call id. */
function appendTool(effects: Array<{ text: string; callId?: string }>, fail?: string) {
  return tool({
    description: "Append a line.",
    inputSchema: z.object({ text: z.string().describe('the line, e.g. "hi"') }),
    execute: async (input, options) => {
      effects.push({ text: input.text, ...(callIdOf(options) && { callId: callIdOf(options) }) });
      if (fail) throw new Error(fail);
      return { appended: input.text, count: effects.length };
    },
  });
}

const openRecord = (place: string) => openToolRecord({ state: memoryStateAt(place), path: `${place}/tool-calls.json` });

/** One attempt at run `runId`: the scripted steps, the tools recorded in `record`. */
function attempt(record: ToolRecord, runId: string, steps: ScriptedStep[], tools: ToolSet) {
  const model = createScriptedModel(steps);
  const turn = runAgentTurn({
    model,
    history: [],
    prompt: "go",
    maxSteps: 5,
    tools: recordedTools(tools, record, runId, "agent:main:main"),
  });
  return { model, turn };
}

const toolOutputs = (prompt: ReturnType<typeof createScriptedModel>["prompts"][number]) =>
  prompt.flatMap((m) =>
    m.role === "tool" ? m.content.flatMap((p) => (p.type === "tool-result" ? [p.output] : [])) : [],
  );

const CALLS: ScriptedStep = {
  toolCalls: [
    { name: "append", input: { text: "one" } },
    { name: "append", input: { text: "two" } },
  ],
};
const CRASH: ScriptedStep = { error: new Error("the process died here") };

describe("recordedTools", () => {
  it("answers a replayed run's calls from the record after a restart: no effect happens twice, the model sees the same results", async () => {
    const place = randomUUID();
    const effects: Array<{ text: string; callId?: string }> = [];
    const first = attempt(await openRecord(place), "run-7", [CALLS, CRASH], { append: appendTool(effects) });
    await expect(first.turn).rejects.toThrow("the process died here");
    expect(effects).toEqual([
      { text: "one", callId: "run-7:0" },
      { text: "two", callId: "run-7:1" },
    ]);

    const replay = attempt(await openRecord(place), "run-7", [CALLS, { text: "done" }], {
      append: appendTool(effects),
    });
    expect((await replay.turn).text).toBe("done");
    expect(effects).toHaveLength(2);
    expect(toolOutputs(replay.model.prompts[1]!)).toEqual(toolOutputs(first.model.prompts[1]!));
  });

  it("records a tool's error and tells a replay the same error, without running the tool again", async () => {
    const place = randomUUID();
    const effects: Array<{ text: string }> = [];
    const step: ScriptedStep = { toolCalls: [{ name: "charge", input: { text: "5 EUR" } }] };
    const first = attempt(await openRecord(place), "run-8", [step, CRASH], {
      charge: appendTool(effects, "card declined"),
    });
    await expect(first.turn).rejects.toThrow("the process died here");
    const replay = attempt(await openRecord(place), "run-8", [step, { text: "sorry" }], {
      charge: appendTool(effects, "card declined"),
    });
    await replay.turn;
    expect(effects).toHaveLength(1);
    expect(JSON.stringify(replay.model.prompts[1]!.at(-1))).toContain("card declined");
  });

  it("runs a call the replayed model makes differently, under an id of its own", async () => {
    const place = randomUUID();
    const effects: Array<{ text: string; callId?: string }> = [];
    const first = attempt(await openRecord(place), "run-9", [CALLS, CRASH], { append: appendTool(effects) });
    await expect(first.turn).rejects.toThrow();
    const other: ScriptedStep = { toolCalls: [{ name: "append", input: { text: "three" } }] };
    await attempt(await openRecord(place), "run-9", [other, { text: "ok" }], { append: appendTool(effects) }).turn;
    expect(effects.at(-1)).toEqual({ text: "three", callId: "run-9:0~2" });
  });

  it("hands the model a result only once its record is durable", async () => {
    const effects: Array<{ text: string }> = [];
    const record = await openRecord(randomUUID());
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: ToolRecord = {
      ...record,
      slot: record.slot,
      put: async (...args) => held.then(() => record.put(...args)),
    };
    const step: ScriptedStep = { toolCalls: [{ name: "append", input: { text: "one" } }] };
    const { model, turn } = attempt(slow, "run-10", [step, { text: "done" }], { append: appendTool(effects) });
    await expect.poll(() => effects.length).toBe(1);
    expect(model.calls).toHaveLength(1);
    release();
    await turn;
    expect(model.calls).toHaveLength(2);
  });
});
