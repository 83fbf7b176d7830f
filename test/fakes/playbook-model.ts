// A model that answers by what it is asked rather than by how many calls came before: each rule
// matches text in the call's system prompt or latest user message, and answers `first` until the
// turn has a tool result and `then` after it. Turns of several sessions can then run in any order,
// and a replayed turn is asked, and answers, exactly what its first attempt was.
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { MockLanguageModelV3 } from "ai/test";
import {
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3GenerateResult,
  usageOf,
} from "../../src/agents/models/language-model-v3.js";

/** One answer: text, tool calls, or `kill` (SIGKILL this process: a crash at that very point); after `delayMs` (a slow model) or a gate. */
export interface PlayStep {
  text?: string;
  toolCalls?: Array<{ name: string; input: unknown }>;
  kill?: true;
  /** wait this long before answering (an abort of the call ends the wait with its error) */
  delayMs?: number;
  /** wait until this file exists before answering: a gate the test opens once what it waits on happened */
  waitForFile?: string;
}

/** When the system prompt or the latest user message contains `when`: `first`, and `then` once the turn has a tool result. */
export interface PlaybookRule {
  when: string;
  first: PlayStep;
  then?: PlayStep;
}

const textOf = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content ?? ""));

/** The rule that answers this call: its words are in the system prompt or the latest user message. */
function ruleFor(rules: readonly PlaybookRule[], call: LanguageModelV3CallOptions): PlaybookRule {
  const system = call.prompt.filter((m) => m.role === "system").map((m) => textOf(m.content));
  const user = call.prompt.filter((m) => m.role === "user").at(-1);
  const asked = [...system, textOf(user?.content)].join("\n");
  const rule = rules.find((r) => asked.includes(r.when));
  if (!rule) throw new Error(`playbook has no rule for: ${asked.slice(-200)}`);
  return rule;
}

function answer(step: PlayStep, call: number): LanguageModelV3GenerateResult {
  if (step.kill) process.kill(process.pid, "SIGKILL");
  const text: LanguageModelV3Content[] = step.text === undefined ? [] : [{ type: "text", text: step.text }];
  const calls = (step.toolCalls ?? []).map(
    (tc, i): LanguageModelV3Content => ({
      type: "tool-call",
      toolCallId: `play_${call}_${i}`,
      toolName: tc.name,
      input: JSON.stringify(tc.input),
    }),
  );
  const reason = calls.length > 0 ? "tool-calls" : "stop";
  return {
    content: [...text, ...calls],
    finishReason: { unified: reason, raw: reason },
    usage: usageOf(10, 5),
    warnings: [],
  };
}

/** Waits until `file` exists, looking every 20 ms; an abort of the call ends the wait with its error. */
async function fileAppears(file: string, signal: AbortSignal | undefined): Promise<void> {
  while (!existsSync(file)) await sleep(20, undefined, signal && { signal });
}

/**
 * A model that plays `rules` (generate only: turns call `generateText`); `onCall` is told each
 * call's rule before it answers (before a `kill` too), so a test can count the calls per step.
 */
export function createPlaybookModel(
  rules: readonly PlaybookRule[],
  onCall: (rule: PlaybookRule) => void = () => undefined,
): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    provider: "playbook",
    modelId: "rules",
    doGenerate: async (call) => {
      const rule = ruleFor(rules, call);
      onCall(rule);
      const afterTool = call.prompt.at(-1)?.role === "tool";
      const step = afterTool && rule.then ? rule.then : rule.first;
      if (step.delayMs) await sleep(step.delayMs, undefined, call.abortSignal && { signal: call.abortSignal });
      if (step.waitForFile) await fileAppears(step.waitForFile, call.abortSignal);
      return answer(step, ++calls);
    },
  });
}
