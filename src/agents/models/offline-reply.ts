import type { LanguageModelV3Message, LanguageModelV3Prompt } from "./language-model-v3.js";
import { matchOfflineIntent } from "./offline-intent.js";
import { summarizeToolResults } from "./offline-summary.js";

/** What the offline model answers: text, or one tool call. */
export type OfflineReply =
  | { type: "text"; text: string }
  | { type: "tool-call"; toolName: string; input: Record<string, string> };

/** The greeting the offline model gives a bare `/new` or `/reset`. */
export const OFFLINE_GREETING = "Hi! New session started (offline model). What should we do next?";

/** Text of the reset prompt (BARE_RESET_PROMPT in src/sessions) that asks for a greeting. */
const RESET_MARKER = "a new session was started via /new or /reset";

function textOf(message: LanguageModelV3Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  const user = prompt.findLast((message) => message.role === "user");
  return user ? textOf(user).trim() : "";
}

// A system notice only asks for a greeting before the first answer; later turns would repeat it forever.
function asksForGreeting(prompt: LanguageModelV3Prompt, userText: string): boolean {
  if (userText.toLowerCase().includes(RESET_MARKER)) return true;
  if (prompt.some((message) => message.role === "assistant")) return false;
  return prompt.some((message) => message.role === "system" && textOf(message).toLowerCase().includes(RESET_MARKER));
}

function systemLine(prompt: LanguageModelV3Prompt, prefix: string): string | undefined {
  for (const message of prompt) {
    if (message.role !== "system") continue;
    // Found without splitting the whole system prompt into lines: the line starts the text or follows a newline.
    const text = textOf(message);
    const at = text.startsWith(prefix) ? 0 : text.indexOf(`\n${prefix}`) + 1;
    if (at === 0 && !text.startsWith(prefix)) continue;
    const end = text.indexOf("\n", at);
    return text.slice(at + prefix.length, end === -1 ? undefined : end).trim();
  }
  return undefined;
}

/**
 * The steps the gateway runs between agents: a sub-agent's announce reports its result; the
 * offline model ends an agent-to-agent exchange at once and keeps its announce silent.
 */
function internalStep(prompt: LanguageModelV3Prompt, userText: string): string | undefined {
  if (userText === "Sub-agent announce step.")
    return `Result: ${systemLine(prompt, "Sub-agent result:") ?? "(not available)"}\nNotes: answered by the offline model`;
  if (userText === "Agent-to-agent announce step.") return "ANNOUNCE_SKIP";
  if (systemLine(prompt, "Agent-to-agent reply step:") !== undefined) return "REPLY_SKIP";
  return undefined;
}

/** Decides the offline model's answer from the prompt and the names of the tools offered in this call. */
export function decideOfflineReply(prompt: LanguageModelV3Prompt, toolNames: ReadonlySet<string>): OfflineReply {
  const last = prompt.at(-1);
  if (last?.role === "tool") return { type: "text", text: summarizeToolResults(last) };
  const userText = lastUserText(prompt);
  const step = internalStep(prompt, userText);
  if (step !== undefined) return { type: "text", text: step };
  if (asksForGreeting(prompt, userText)) return { type: "text", text: OFFLINE_GREETING };
  const intent = matchOfflineIntent(userText);
  if (intent && toolNames.has(intent.toolName)) return { type: "tool-call", ...intent };
  if (intent)
    return {
      type: "text",
      text: `The ${intent.toolName} tool is not available here, so I cannot do that in this session.`,
    };
  return { type: "text", text: userText ? `Echo: ${userText}` : "Echo: (empty message)" };
}
