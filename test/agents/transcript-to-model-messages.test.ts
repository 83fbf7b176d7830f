import { type ModelMessage, generateText } from "ai";
import { describe, expect, it } from "vitest";
import {
  MISSING_TOOL_RESULT,
  toToolOutput,
  transcriptToModelMessages,
} from "../../src/agents/transcript-to-model-messages.js";
import type { TranscriptMessage } from "../../src/sessions/transcripts/index.js";
import { createScriptedModel } from "../fakes/scripted-model.js";

const at = (message: Pick<TranscriptMessage, "role" | "content">): TranscriptMessage => ({ ...message, timestamp: 1 });

describe("transcriptToModelMessages", () => {
  it("maps user text, assistant text and tool calls, and tool results", () => {
    const history = [
      at({ role: "user", content: "weather?" }),
      at({
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "toolCall", id: "c1", name: "weather", arguments: { city: "Oslo" } },
        ],
      }),
      at({
        role: "toolResult",
        content: [{ type: "toolResult", toolCallId: "c1", content: [{ type: "text", text: "sunny" }] }],
      }),
      at({ role: "assistant", content: "It is sunny." }),
    ];
    expect(transcriptToModelMessages(history)).toEqual({
      system: [],
      messages: [
        { role: "user", content: "weather?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Oslo" } },
          ],
        },
        {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "sunny" } },
          ],
        },
        { role: "assistant", content: "It is sunny." },
      ],
    });
  });

  it("gives a reply that is one text as a string, which the model receives as the same text part", async () => {
    const history = [
      at({ role: "user", content: "hi" }),
      at({ role: "assistant", content: [{ type: "text", text: "hello" }] }),
    ];
    const { messages } = transcriptToModelMessages(history);
    expect(messages[1]).toEqual({ role: "assistant", content: "hello" });
    const asParts = createScriptedModel([{ text: "a" }]);
    const asString = createScriptedModel([{ text: "a" }]);
    const parts: ModelMessage = { role: "assistant", content: [{ type: "text", text: "hello" }] };
    await generateText({ model: asParts, messages: [messages[0]!, parts, { role: "user", content: "and?" }] });
    await generateText({ model: asString, messages: [...messages, { role: "user", content: "and?" }] });
    expect(asString.prompts[0]).toEqual(asParts.prompts[0]);
    expect(asString.prompts[0]![1]).toMatchObject({ role: "assistant", content: [{ type: "text", text: "hello" }] });
  });

  it("reads the older toolCall role as an assistant message", () => {
    const history = [
      at({ role: "toolCall", content: [{ type: "toolCall", id: "c1", name: "weather", arguments: {} }] }),
      at({
        role: "toolResult",
        content: [{ type: "toolResult", toolCallId: "c1", content: { temp: 20 }, isError: false }],
      }),
    ];
    expect(transcriptToModelMessages(history).messages).toEqual([
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "weather", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "json", value: { temp: 20 } } },
        ],
      },
    ]);
  });

  it("leaves out chat commands and their replies", () => {
    const history = [
      at({ role: "user", content: "hi" }),
      { ...at({ role: "user", content: "/status" }), command: true as const },
      { ...at({ role: "assistant", content: "Session: agent:main:main" }), command: true as const },
      at({ role: "assistant", content: "hello" }),
    ];
    expect(transcriptToModelMessages(history).messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
  });

  it("moves system messages into the system prompt", () => {
    const history = [
      at({ role: "system", content: "Session reset." }),
      at({ role: "user", content: "hi" }),
      at({ role: "system", content: [{ type: "text", text: "Model changed." }] }),
    ];
    expect(transcriptToModelMessages(history)).toEqual({
      system: ["Session reset.", "Model changed."],
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it("answers a tool call left without a result before the next message", () => {
    const history = [
      at({ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "sessions_send", arguments: {} }] }),
      at({ role: "user", content: "stop" }),
    ];
    expect(transcriptToModelMessages(history).messages).toEqual([
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "sessions_send", input: {} }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "sessions_send",
            output: { type: "error-text", value: MISSING_TOOL_RESULT },
          },
        ],
      },
      { role: "user", content: "stop" },
    ]);
  });

  it("drops a tool result that answers no open call", () => {
    const history = [
      at({ role: "toolResult", content: [{ type: "toolResult", toolCallId: "ghost", content: "x" }] }),
      at({ role: "user", content: "hi" }),
    ];
    expect(transcriptToModelMessages(history).messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("gives a bare text result to the oldest open call", () => {
    const history = [
      at({ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "weather", arguments: {} }] }),
      at({ role: "toolResult", content: "sunny" }),
    ];
    expect(transcriptToModelMessages(history).messages[1]).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "sunny" } },
      ],
    });
  });

  it("skips empty messages and unknown blocks", () => {
    const history = [
      at({ role: "user", content: "  " }),
      at({ role: "assistant", content: [{ type: "thinking", thinking: "hmm" }] }),
      at({
        role: "user",
        content: [
          { type: "image", data: "..." },
          { type: "text", text: "look" },
        ],
      }),
    ];
    expect(transcriptToModelMessages(history).messages).toEqual([{ role: "user", content: "look" }]);
  });
});

describe("toToolOutput", () => {
  it.each([
    ["a string as text", "ok", false, { type: "text", value: "ok" }],
    [
      "text blocks as text",
      [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      false,
      { type: "text", value: "a\nb" },
    ],
    ["an object as JSON", { n: 1 }, false, { type: "json", value: { n: 1 } }],
    ["an error string as error text", "boom", true, { type: "error-text", value: "boom" }],
    ["an error object as error JSON", { code: "X" }, true, { type: "error-json", value: { code: "X" } }],
    ["undefined as JSON null", undefined, false, { type: "json", value: null }],
  ])("maps %s", (_name, content, isError, expected) => {
    expect(toToolOutput(content, isError)).toEqual(expected);
  });
});
