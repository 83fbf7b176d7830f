import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { createGatewayMetrics } from "../../../src/gateway/metrics/gateway-metrics.js";
import { observeModels } from "../../../src/gateway/metrics/observe-model.js";
import { createScriptedModel } from "../../fakes/scripted-model.js";
import { scrape } from "../../support/scrape.js";

/** The metrics' exposition, read as a scrape would read it. */
async function read(metrics: ReturnType<typeof createGatewayMetrics>) {
  return scrape({ text: () => metrics.scrape() });
}

describe("observeModels", () => {
  it("times each call and counts its tokens under provider and model, and counts a failed call as an error", async () => {
    const metrics = createGatewayMetrics();
    const model = createScriptedModel([
      { text: "one", usage: { inputTokens: 12, outputTokens: 3 } },
      { error: new Error("provider down") },
    ]);
    const resolve = observeModels((ref) => ({ model, ref, offline: false }), metrics);
    const { model: observed } = resolve("openai/gpt-4o-mini");
    await generateText({ model: observed, prompt: "hi" });
    await expect(generateText({ model: observed, prompt: "again", maxRetries: 0 })).rejects.toThrow(/provider down/);
    const m = await read(metrics);
    const labels = { provider: "openai", model: "gpt-4o-mini" };
    expect(m.value("switchboard_model_call_duration_seconds_count", { ...labels, outcome: "ok" })).toBe(1);
    expect(m.value("switchboard_model_call_duration_seconds_count", { ...labels, outcome: "error" })).toBe(1);
    expect(m.value("switchboard_model_tokens_total", { ...labels, direction: "input" })).toBe(12);
    expect(m.value("switchboard_model_tokens_total", { ...labels, direction: "output" })).toBe(3);
  });

  it("wraps a model object resolved for every turn once, and counts all its calls in one series", async () => {
    const metrics = createGatewayMetrics();
    const model = createScriptedModel([{ text: "one" }, { text: "two" }]);
    const resolve = observeModels((ref) => ({ model, ref, offline: false }), metrics);
    const first = resolve("openai/gpt-4o-mini").model;
    const second = resolve("openai/gpt-4o-mini").model;
    expect(second).toBe(first);
    await generateText({ model: first, prompt: "hi" });
    await generateText({ model: second, prompt: "again" });
    const m = await read(metrics);
    const ok = { provider: "openai", model: "gpt-4o-mini", outcome: "ok" };
    expect(m.value("switchboard_model_call_duration_seconds_count", ok)).toBe(2);
    // The same object under another name is counted under that name.
    await generateText({ model: resolve("anthropic/claude").model, prompt: "third" }).catch(() => undefined);
    expect(
      (await read(metrics)).value("switchboard_model_call_duration_seconds_count", { provider: "anthropic" }),
    ).toBe(1);
  });

  it("leaves a model given by name (not a model object) as it is", () => {
    const metrics = createGatewayMetrics();
    const resolve = observeModels((ref) => ({ model: "gateway-model-id", ref, offline: false }), metrics);
    expect(resolve("openai/x").model).toBe("gateway-model-id");
  });
});
