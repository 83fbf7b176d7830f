import { describe, expect, it } from "vitest";
import { selectModel } from "../../src/sessions/model-selection.js";

const catalog = {
  entries: [
    { provider: "minimax", model: "m2.1" },
    { provider: "openai", model: "gpt-4o-mini", aliases: ["mini"] },
    { provider: "openai", model: "gpt-4o" },
    { provider: "anthropic", model: "claude-sonnet-4-5", aliases: ["sonnet"] },
  ],
};

describe("selectModel", () => {
  it.each([
    [
      "a provider name picks its model and the rest is the body",
      "minimax summarize",
      { model: { provider: "minimax", model: "m2.1" }, body: "summarize" },
    ],
    [
      "provider and model as two words",
      "openai gpt-4o tell me a joke",
      { model: { provider: "openai", model: "gpt-4o" }, body: "tell me a joke" },
    ],
    ["an exact alias", "sonnet hi", { model: { provider: "anthropic", model: "claude-sonnet-4-5" }, body: "hi" }],
    ["provider/model", "openai/gpt-4o-mini", { model: { provider: "openai", model: "gpt-4o-mini" }, body: "" }],
    [
      "a long fuzzy name",
      "claude-sonet-4-5 write",
      { model: { provider: "anthropic", model: "claude-sonnet-4-5" }, body: "write" },
    ],
    ["a short unknown word is the message", "hi there", { body: "hi there" }],
    [
      "no model words keep the whole text, line breaks included",
      "summarize this\nand that",
      { body: "summarize this\nand that" },
    ],
  ])("%s", (_name, remainder, expected) => {
    expect(selectModel(remainder, catalog)).toEqual(expected);
  });

  it("selects nothing without a catalog", () => {
    expect(selectModel("minimax summarize", undefined)).toEqual({ body: "minimax summarize" });
  });
});
