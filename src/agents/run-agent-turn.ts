import { type LanguageModel, type ModelMessage, type ToolSet, generateText, modelMessageSchema, stepCountIs } from "ai";
import type { TranscriptMessage } from "../sessions/transcripts/index.js";
import { createSteering } from "./queue/steering.js";
import { stepToTranscriptMessages } from "./run-agent-turn-messages.js";
import { DEFAULT_KEEP_TOOL_RESULTS, pruneToolResults } from "./prune-tool-results.js";
import { transcriptToModelMessages } from "./transcript-to-model-messages.js";

/** One agent turn: the model, the context and the new user prompt. */
export interface AgentTurnInput {
  model: LanguageModel;
  system?: string;
  /** the transcript so far, oldest first (tool messages included) */
  history: readonly TranscriptMessage[];
  prompt: string;
  tools?: ToolSet;
  /** model calls in this turn, tool steps included */
  maxSteps: number;
  /** aborts the turn (`/stop`, timeout); the promise rejects with the abort reason */
  signal?: AbortSignal;
  /** default 3; tool results older than these reach the model as a placeholder */
  keepToolResults?: number;
  /** default Date.now; stamps the new transcript messages */
  now?: () => number;
  /** provider options (thinking), passed to the model as they are */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** called with each tool call once its step finished (`/verbose on`) */
  onToolCall?: (call: { name: string; input: unknown }) => void;
  /** steer mode: messages that arrived meanwhile, taken between model steps (see `createSteering`) */
  steer?: () => Promise<string[]>;
}

/** Tokens used by a whole turn (all steps). */
interface AgentTurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** What a turn produced; `newMessages` (all stamped) is what to append to the transcript, in order. */
export interface AgentTurnResult {
  /** the text of the last step ("" when the turn ended on a tool call, e.g. at maxSteps) */
  text: string;
  newMessages: TranscriptMessage[];
  usage: AgentTurnUsage;
  /** the last step's reason: "stop", "tool-calls", "length", ... */
  finishReason: string;
  steps: number;
}

let promptCheckReady = false;

/**
 * The SDK checks every prompt against `z.array(modelMessageSchema)`, a new array schema per call.
 * Before parsing through a new schema, zod looks for reference cycles in everything below it, and it
 * keeps that answer for the message schema only once the schema's lazily built JSON-value part has
 * been built by a parse; until then the whole message schema is walked again for every prompt (most
 * of the check's time and garbage for a short conversation). One parse of a message that carries
 * provider options builds that part, once per process; the check itself is unchanged.
 */
function readyPromptCheck(): void {
  if (promptCheckReady) return;
  promptCheckReady = true;
  modelMessageSchema.safeParse({ role: "user", content: "", providerOptions: { switchboard: { ready: null } } });
}

/**
 * Runs one agent turn with the AI SDK: history plus prompt, a tool loop of at most `maxSteps`
 * model calls, older tool results pruned before each call. Aborts reject with the signal's reason.
 */
export async function runAgentTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
  readyPromptCheck();
  const now = input.now ?? Date.now;
  const keep = input.keepToolResults ?? DEFAULT_KEEP_TOOL_RESULTS;
  const conversation = transcriptToModelMessages(input.history);
  const system = [input.system?.trim(), ...conversation.system].filter(Boolean).join("\n\n");
  const newMessages: TranscriptMessage[] = [{ role: "user", content: input.prompt, timestamp: now() }];
  const steering = input.steer && createSteering(input.steer, now, newMessages);
  let messages: ModelMessage[] = [...conversation.messages, { role: "user", content: input.prompt }];
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  // One round, unless steered messages arrive after the model's answer: then another round answers them too.
  for (let steps = 0; ; ) {
    const result = await generateText({
      model: input.model,
      ...(system && { system }),
      messages,
      ...(input.tools && { tools: input.tools }),
      stopWhen: stepCountIs(input.maxSteps - steps),
      ...(input.signal && { abortSignal: input.signal }),
      prepareStep: async ({ messages: step, stepNumber }) => ({
        messages: pruneToolResults(steering ? await steering.before(step, stepNumber) : step, keep),
      }),
      ...(input.providerOptions && { providerOptions: input.providerOptions as never }),
      onStepFinish: (step) => {
        newMessages.push(...stepToTranscriptMessages(step, now()));
        for (const call of step.toolCalls) input.onToolCall?.({ name: call.toolName, input: call.input });
      },
    });
    const { inputTokens = 0, outputTokens = 0, totalTokens } = result.totalUsage;
    usage.inputTokens += inputTokens;
    usage.outputTokens += outputTokens;
    usage.totalTokens += totalTokens ?? inputTokens + outputTokens;
    steps += result.steps.length;
    const next =
      steering && steps < input.maxSteps ? await steering.next([...messages, ...result.response.messages]) : undefined;
    if (!next) return { text: result.text, newMessages, usage, finishReason: result.finishReason, steps };
    messages = next;
  }
}
