// Every tool of a turn, wrapped so that each call is recorded durably before the model sees its
// result, and a replayed turn is answered from the record instead of acting a second time.
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";
import { errorText } from "./run-agent-turn-messages.js";
import type { ToolCallOutcome, ToolRecord } from "./tool-record.js";

/** What a wrapped tool's own `execute` finds in `options.experimental_context`. */
interface RecordedCallContext {
  /** `<runId>:<position>`: the call's position in the run, stable across a replay */
  callId: string;
}

/** The call id the record gave the call a tool is executing (undefined outside a recorded turn). */
export function callIdOf(options: Pick<ToolExecutionOptions, "experimental_context"> | undefined): string | undefined {
  const context = options?.experimental_context as Partial<RecordedCallContext> | undefined;
  return typeof context?.callId === "string" ? context.callId : undefined;
}

/** The final value of a tool's answer (a streaming tool's last one). */
async function finalOutput(answer: unknown): Promise<unknown> {
  const value = await answer;
  if (value === null || typeof value !== "object" || !(Symbol.asyncIterator in value)) return value;
  let last: unknown;
  for await (const part of value as AsyncIterable<unknown>) last = part;
  return last;
}

/** What the model was told the first time: the output, or the same error again. */
function answerFrom(outcome: ToolCallOutcome): unknown {
  if (outcome.ok) return outcome.output;
  throw new Error(outcome.error);
}

/** One tool, recorded: its `execute` answers from the record or runs and records before returning. */
function recordedTool(
  name: string,
  inner: Tool,
  run: { record: ToolRecord; runId: string; sessionKey: string; position: Positions },
): Tool {
  const execute = inner.execute!.bind(inner);
  const { record, runId, sessionKey, position } = run;
  return {
    ...inner,
    onInputAvailable: async (options) => {
      position.assign(options.toolCallId);
      await inner.onInputAvailable?.(options);
    },
    execute: async (input: unknown, options: ToolExecutionOptions) => {
      const slot = record.slot(runId, position.of(options.toolCallId), name, input);
      if (slot.recorded) return answerFrom(slot.recorded);
      const context: RecordedCallContext = { callId: slot.callId };
      const call = { runId, sessionKey, name, input };
      let output: unknown;
      try {
        output = await finalOutput(execute(input, { ...options, experimental_context: context }));
      } catch (err) {
        // An aborted turn is not replayed; anything else the model is told is recorded first.
        if (!options.abortSignal?.aborted)
          await record.put(slot.callId, { ...call, outcome: { ok: false, error: errorText(err) } });
        throw err;
      }
      await record.put(slot.callId, { ...call, outcome: { ok: true, output } });
      return output;
    },
  } as Tool;
}

/** Positions of a run's calls, in the order the model asked for them (the SDK announces a step's calls one by one). */
interface Positions {
  assign(toolCallId: string): void;
  of(toolCallId: string): number;
}

function positions(): Positions {
  let next = 0;
  const byCall = new Map<string, number>();
  return {
    assign: (toolCallId) => void byCall.set(toolCallId, next++),
    of: (toolCallId) => byCall.get(toolCallId) ?? next++,
  };
}

/**
 * The turn's tools, recorded in `record` under run `runId` of session `sessionKey` (canonical; the
 * rows' partition): a call's outcome is durable before the
 * model is given it, and a call the record already holds (a turn replayed after a crash) is answered
 * from it without running again. Tools without `execute` are left as they are.
 */
export function recordedTools(tools: ToolSet, record: ToolRecord, runId: string, sessionKey: string): ToolSet {
  const run = { record, runId, sessionKey, position: positions() };
  const set: ToolSet = {};
  for (const [name, inner] of Object.entries(tools))
    set[name] = inner.execute ? recordedTool(name, inner as Tool, run) : inner;
  return set;
}
