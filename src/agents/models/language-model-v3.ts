import type { LanguageModel } from "ai";

// Derived from `ai`'s own `LanguageModel` so we depend only on the packages we list in package.json.

/** The provider specification v3 a model implements (`@ai-sdk/provider`'s `LanguageModelV3`). */
export type LanguageModelV3 = Extract<LanguageModel, { specificationVersion: "v3" }>;
/** What `doGenerate` and `doStream` receive: prompt, tools, abort signal, settings. */
export type LanguageModelV3CallOptions = Parameters<LanguageModelV3["doGenerate"]>[0];
/** The prompt a model receives: system, user, assistant and tool messages. */
export type LanguageModelV3Prompt = LanguageModelV3CallOptions["prompt"];
/** One message of a {@link LanguageModelV3Prompt}. */
export type LanguageModelV3Message = LanguageModelV3Prompt[number];
/** What `doGenerate` resolves to. */
export type LanguageModelV3GenerateResult = Awaited<ReturnType<LanguageModelV3["doGenerate"]>>;
/** What `doStream` resolves to. */
type LanguageModelV3StreamResult = Awaited<ReturnType<LanguageModelV3["doStream"]>>;
/** One part of a `doStream` stream. */
export type LanguageModelV3StreamPart =
  LanguageModelV3StreamResult["stream"] extends ReadableStream<infer P> ? P : never;
/** One part of a generated `content` array (text, tool call, ...). */
export type LanguageModelV3Content = LanguageModelV3GenerateResult["content"][number];
/** Token usage as a v3 model reports it. */
export type LanguageModelV3Usage = LanguageModelV3GenerateResult["usage"];

/** A v3 usage record from plain input and output counts. */
export function usageOf(input: number, output: number): LanguageModelV3Usage {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}
