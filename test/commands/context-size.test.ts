import { describe, expect, it } from "vitest";
import { contextSize, estimateTokens, messageText } from "../../src/commands/context-size.js";

describe("estimateTokens", () => {
  it("counts four characters a token, rounding up", () => {
    expect([estimateTokens(""), estimateTokens("abcd"), estimateTokens("abcde")]).toEqual([0, 1, 2]);
  });
});

describe("contextSize", () => {
  it("counts messages, estimated tokens and messages per role; blocks other than text count as JSON", () => {
    const call = { type: "toolCall", id: "c1", name: "sessions_list", arguments: {} };
    const messages = [
      { role: "user" as const, content: "12345678", timestamp: 0 },
      { role: "assistant" as const, content: [{ type: "text", text: "abcd" }, call], timestamp: 0 },
    ];
    expect(messageText(messages[1]!)).toBe(`abcd\n${JSON.stringify(call)}`);
    expect(contextSize(messages)).toEqual({
      messages: 2,
      tokens: 2 + estimateTokens(`abcd\n${JSON.stringify(call)}`),
      byRole: { user: 1, assistant: 1 },
    });
  });
});
