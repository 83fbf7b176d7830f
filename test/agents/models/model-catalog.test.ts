import { describe, expect, it } from "vitest";
import { buildModelCatalog } from "../../../src/agents/models/model-catalog.js";
import { ConfigSchema } from "../../../src/config/index.js";
import { selectModel } from "../../../src/sessions/model-selection.js";

describe("buildModelCatalog", () => {
  it("holds only offline/echo by default", () => {
    expect(buildModelCatalog(ConfigSchema.parse({}))).toEqual({ entries: [{ provider: "offline", model: "echo" }] });
  });

  it("lists the default, per-agent and alias models once each, with their alias names", () => {
    const config = ConfigSchema.parse({
      agents: {
        defaults: { model: "mini" },
        list: [
          { id: "main" },
          { id: "ops", model: "anthropic/claude-sonnet-4-5" },
          { id: "dev", model: "openai/gpt-4o-mini" },
        ],
      },
      models: {
        aliases: {
          mini: "openai/gpt-4o-mini",
          small: "openai/gpt-4o-mini",
          local: "openai/llama3.2",
          sonnet: "anthropic/claude-sonnet-4-5",
        },
      },
    });
    expect(buildModelCatalog(config).entries).toEqual([
      { provider: "offline", model: "echo" },
      { provider: "openai", model: "gpt-4o-mini", aliases: ["mini", "small"] },
      { provider: "anthropic", model: "claude-sonnet-4-5", aliases: ["sonnet"] },
      { provider: "openai", model: "llama3.2", aliases: ["local"] },
    ]);
  });

  it("feeds selectModel so `/new <alias>` picks the aliased model", () => {
    const config = ConfigSchema.parse({ models: { aliases: { local: "openai/llama3.2" } } });
    expect(selectModel("local hello", buildModelCatalog(config))).toEqual({
      model: { provider: "openai", model: "llama3.2" },
      body: "hello",
    });
  });
});
