import { describe, expect, it } from "vitest";
import { parseModelRef, resolveAlias } from "../../../src/agents/models/model-ref.js";

describe("parseModelRef", () => {
  it.each([
    ["openai/gpt-4o-mini", { provider: "openai", model: "gpt-4o-mini" }],
    ["OpenAI/GPT-4o", { provider: "openai", model: "GPT-4o" }],
    ["openai/org/model:7b", { provider: "openai", model: "org/model:7b" }],
    [" offline/echo ", { provider: "offline", model: "echo" }],
  ])("splits %j at the first slash", (ref, expected) => {
    expect(parseModelRef(ref)).toEqual(expected);
  });

  it.each(["gpt-4o", "/gpt-4o", "openai/", ""])("returns undefined for %j", (ref) => {
    expect(parseModelRef(ref)).toBeUndefined();
  });
});

describe("resolveAlias", () => {
  const aliases = { mini: "openai/gpt-4o-mini", Local: "openai/llama3.2" };

  it.each([
    ["mini", "openai/gpt-4o-mini"],
    ["local", "openai/llama3.2"],
    ["openai/gpt-4o", "openai/gpt-4o"],
    ["unknown", "unknown"],
  ])("maps %j to %j", (ref, expected) => {
    expect(resolveAlias(ref, aliases)).toBe(expected);
  });
});
