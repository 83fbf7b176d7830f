import { describe, expect, it } from "vitest";
import { contextWindowOf } from "../../../src/agents/models/context-window.js";
import { supportsThinking, thinkingOptions } from "../../../src/agents/models/thinking-options.js";
import { parseConfig } from "../../../src/config/index.js";

describe("thinkingOptions", () => {
  it.each([
    ["openai/o3-mini", "high", { openai: { reasoningEffort: "high" } }],
    ["openai/gpt-5", "minimal", { openai: { reasoningEffort: "minimal" } }],
    ["anthropic/claude-sonnet-4-5", "low", { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } }],
    ["openai/gpt-4o-mini", "high", undefined],
    ["offline/echo", "high", undefined],
    ["openai/o3", "off", undefined],
    ["openai/o3", undefined, undefined],
  ])("%s at %s", (ref, level, expected) => {
    expect(thinkingOptions(ref, level)).toEqual(expected);
  });

  it("knows which models reason on request", () => {
    expect([
      supportsThinking("openai/o4-mini"),
      supportsThinking("anthropic/claude-3-5-haiku"),
      supportsThinking("anthropic/claude-3-7-sonnet"),
    ]).toEqual([true, false, true]);
  });
});

describe("contextWindowOf", () => {
  it("takes models.contextWindows first, then the built-in table, then 128k", () => {
    const { config } = parseConfig({ models: { contextWindows: { "openai/gpt-4o": 64_000 } } });
    expect(contextWindowOf(config, "openai/gpt-4o")).toBe(64_000);
    expect(contextWindowOf(config, "openai/gpt-4o-mini")).toBe(128_000);
    expect(contextWindowOf(config, "anthropic/claude-opus-4")).toBe(200_000);
    expect(contextWindowOf(config, "offline/echo")).toBe(32_000);
    expect(contextWindowOf(config, "ollama/llama3")).toBe(128_000);
  });
});
