import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { PRUNED_TOOL_RESULT, pruneToolResults } from "../../src/agents/prune-tool-results.js";

const call = (id: string): ModelMessage => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "t", input: {} }],
});
const result = (...ids: string[]): ModelMessage => ({
  role: "tool",
  content: ids.map((id) => ({
    type: "tool-result" as const,
    toolCallId: id,
    toolName: "t",
    output: { type: "text" as const, value: `result ${id}` },
  })),
});
const outputs = (messages: ModelMessage[]) =>
  messages.flatMap((m) =>
    m.role === "tool"
      ? m.content.flatMap((p) => (p.type === "tool-result" && p.output.type === "text" ? [p.output.value] : []))
      : [],
  );

describe("pruneToolResults", () => {
  const messages: ModelMessage[] = [
    { role: "user", content: "go" },
    call("1"),
    result("1"),
    call("2"),
    result("2", "3"),
    call("4"),
    result("4"),
  ];

  it("keeps the newest results and replaces older ones with a placeholder", () => {
    expect(outputs(pruneToolResults(messages, 2))).toEqual([
      PRUNED_TOOL_RESULT,
      PRUNED_TOOL_RESULT,
      "result 3",
      "result 4",
    ]);
  });

  it("keeps three by default", () => {
    expect(outputs(pruneToolResults(messages))).toEqual([PRUNED_TOOL_RESULT, "result 2", "result 3", "result 4"]);
  });

  it("prunes every result when keep is 0", () => {
    expect(outputs(pruneToolResults(messages, 0))).toEqual(Array(4).fill(PRUNED_TOOL_RESULT));
  });

  it("leaves the input messages untouched", () => {
    const copy = structuredClone(messages);
    pruneToolResults(messages, 0);
    expect(messages).toEqual(copy);
  });

  it("keeps tool-call ids and names so every call still has its result", () => {
    const pruned = pruneToolResults(messages, 0)[2];
    expect(pruned).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "1", toolName: "t", output: { type: "text", value: PRUNED_TOOL_RESULT } },
      ],
    });
  });
});
