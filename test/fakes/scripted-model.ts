// A model that plays back one scripted response per call and records every prompt it got, so
// tests can drive agent turns (tool loops, aborts, pruning) without a network.
import { MockLanguageModelV3, convertArrayToReadableStream } from "ai/test";
import {
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
  usageOf,
} from "../../src/agents/models/language-model-v3.js";

/** One scripted model response. */
export interface ScriptedStep {
  text?: string;
  toolCalls?: Array<{ name: string; input: unknown; id?: string }>;
  /** wait this long before answering; an abort during the wait rejects with the abort reason */
  delayMs?: number;
  /** answer only once this promise settles (the test decides when the model "finishes") */
  until?: Promise<unknown>;
  /** default { inputTokens: 10, outputTokens: 5 } */
  usage?: { inputTokens: number; outputTokens: number };
  /** reject the call with this error instead of answering */
  error?: Error;
}

/** A mock model with the prompts and call options it received, oldest first. */
export type ScriptedModel = MockLanguageModelV3 & {
  prompts: LanguageModelV3Prompt[];
  calls: LanguageModelV3CallOptions[];
};

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function contentOf(step: ScriptedStep, call: number): LanguageModelV3Content[] {
  const text: LanguageModelV3Content[] = step.text === undefined ? [] : [{ type: "text", text: step.text }];
  const calls = (step.toolCalls ?? []).map(
    (tc, i): LanguageModelV3Content => ({
      type: "tool-call",
      toolCallId: tc.id ?? `call_${call}_${i + 1}`,
      toolName: tc.name,
      input: JSON.stringify(tc.input ?? {}),
    }),
  );
  return [...text, ...calls];
}

function streamOf(result: LanguageModelV3GenerateResult): LanguageModelV3StreamPart[] {
  const body = result.content.flatMap((part, i): LanguageModelV3StreamPart[] =>
    part.type === "text"
      ? [
          { type: "text-start", id: `t${i}` },
          { type: "text-delta", id: `t${i}`, delta: part.text },
          { type: "text-end", id: `t${i}` },
        ]
      : part.type === "tool-call"
        ? [part]
        : [],
  );
  return [
    { type: "stream-start", warnings: [] },
    ...body,
    { type: "finish", usage: result.usage, finishReason: result.finishReason },
  ];
}

/** A model that answers call N with `steps[N]` (generate or stream) and throws when the script runs out. */
export function createScriptedModel(
  steps: ScriptedStep[],
  options: { provider?: string; modelId?: string } = {},
): ScriptedModel {
  const prompts: LanguageModelV3Prompt[] = [];
  const calls: LanguageModelV3CallOptions[] = [];
  const respond = async (call: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> => {
    calls.push(call);
    prompts.push(call.prompt);
    const step = steps[calls.length - 1];
    if (!step) throw new Error(`scripted model has no step ${calls.length}: the script has ${steps.length}`);
    if (step.delayMs) await wait(step.delayMs, call.abortSignal);
    if (step.until) await step.until;
    call.abortSignal?.throwIfAborted();
    if (step.error) throw step.error;
    const content = contentOf(step, calls.length);
    const reason = content.some((part) => part.type === "tool-call") ? "tool-calls" : "stop";
    const usage = step.usage ?? { inputTokens: 10, outputTokens: 5 };
    return {
      content,
      finishReason: { unified: reason, raw: reason },
      usage: usageOf(usage.inputTokens, usage.outputTokens),
      warnings: [],
    };
  };
  const model = new MockLanguageModelV3({
    provider: options.provider ?? "scripted",
    modelId: options.modelId ?? "script",
    doGenerate: respond,
    doStream: async (call) => ({ stream: convertArrayToReadableStream(streamOf(await respond(call))) }),
  });
  return Object.assign(model, { prompts, calls });
}
