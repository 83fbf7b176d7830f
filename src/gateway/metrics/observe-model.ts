import { performance } from "node:perf_hooks";
import { wrapLanguageModel } from "ai";
import type { ResolvedModel } from "../../agents/models/index.js";
import type { LanguageModelV3, LanguageModelV3Usage } from "../../agents/models/language-model-v3.js";
import type { GatewayMetrics } from "./gateway-metrics.js";

/** `openai/gpt-4o-mini` -> provider `openai`, model `gpt-4o-mini`. */
function labelsOf(ref: string): { provider: string; model: string } {
  const slash = ref.indexOf("/");
  return slash < 0 ? { provider: ref, model: ref } : { provider: ref.slice(0, slash), model: ref.slice(slash + 1) };
}

const tokensOf = (usage: LanguageModelV3Usage) => ({
  input: usage.inputTokens.total,
  output: usage.outputTokens.total,
});
type Tokens = ReturnType<typeof tokensOf>;

/** The model with each call timed and its tokens counted under its `provider/model`. */
function observed(model: LanguageModelV3, ref: string, metrics: GatewayMetrics): LanguageModelV3 {
  const calls = metrics.modelCalls(labelsOf(ref));
  const timed = async <T>(call: () => PromiseLike<T>, tokens: (result: T) => Tokens | undefined) => {
    const started = performance.now();
    try {
      const result = await call();
      calls.observe("ok", (performance.now() - started) / 1000, tokens(result));
      return result;
    } catch (err) {
      calls.observe("error", (performance.now() - started) / 1000);
      throw err;
    }
  };
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v3",
      wrapGenerate: ({ doGenerate }) => timed(doGenerate, (result) => tokensOf(result.usage)),
      // A stream's tokens come at its end; its call is timed to the first response.
      wrapStream: ({ doStream }) => timed(doStream, () => undefined),
    },
  });
}

/**
 * `resolveModel` whose models report call latency and tokens to `metrics` (models that are not v3
 * objects pass as they are). A model object resolved again is wrapped once: its wrapper is kept
 * for as long as the model lives.
 */
export function observeModels(
  resolveModel: (ref: string) => ResolvedModel,
  metrics: GatewayMetrics,
): (ref: string) => ResolvedModel {
  const wrapped = new WeakMap<LanguageModelV3, { ref: string; model: LanguageModelV3 }>();
  return (ref) => {
    const resolved = resolveModel(ref);
    const model = resolved.model;
    if (typeof model !== "object" || model.specificationVersion !== "v3") return resolved;
    let kept = wrapped.get(model);
    if (kept?.ref !== resolved.ref) {
      kept = { ref: resolved.ref, model: observed(model, resolved.ref, metrics) };
      wrapped.set(model, kept);
    }
    return { ...resolved, model: kept.model };
  };
}
