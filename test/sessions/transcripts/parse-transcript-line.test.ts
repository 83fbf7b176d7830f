import { describe, expect, it } from "vitest";
import { parseTranscriptLine } from "../../../src/sessions/transcripts/index.js";

const line = (message: unknown) => JSON.stringify({ type: "message", timestamp: "2026-01-01T00:00:00.000Z", message });

describe("parseTranscriptLine", () => {
  it("reads a message with text, tool call, tool result and unknown blocks, keeping unknown fields", () => {
    const message = {
      role: "assistant",
      content: [
        { type: "text", text: "hi" },
        { type: "toolCall", id: "c1", name: "weather", arguments: { city: "Oslo" } },
        { type: "toolResult", toolCallId: "c1", content: [{ type: "text", text: "sunny" }], isError: false },
        { type: "image", data: "..." },
      ],
      timestamp: 1,
      model: "openai/gpt",
      stopReason: "stop",
      provenance: { kind: "session", sessionKey: "agent:main:main", hop: 1 },
      usage: { input: 3, output: 4, totalTokens: 7 },
    };
    expect(parseTranscriptLine(line(message))).toEqual({ kind: "message", message });
  });

  it("reads the header line", () => {
    const header = { type: "session", version: 1, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" };
    expect(parseTranscriptLine(JSON.stringify(header))).toEqual({ kind: "header", header });
  });

  it("passes over blank lines and events of other types", () => {
    expect(parseTranscriptLine("  ")).toEqual({ kind: "other" });
    expect(parseTranscriptLine('{"type":"compaction","summary":"..."}')).toEqual({ kind: "other" });
  });

  it.each([
    ['{"type":"message","message":{"ro', "not JSON"],
    ["[1,2]", "not a JSON object"],
    ['{"message":{}}', 'no "type" field'],
    [line({ role: "robot", content: "x", timestamp: 1 }), "message.role"],
    [line({ role: "user", content: "x" }), "message.timestamp"],
    [line({ role: "user", content: [{ type: "text" }], timestamp: 1 }), "message.content"],
    [line({ role: "user", content: "x", timestamp: 1, provenance: { kind: "elsewhere" } }), "message.provenance.kind"],
  ])("reports %s as invalid, naming %j", (text, reason) => {
    const parsed = parseTranscriptLine(text);
    expect(parsed.kind).toBe("invalid");
    expect(parsed.kind === "invalid" && parsed.reason).toContain(reason);
  });
});
