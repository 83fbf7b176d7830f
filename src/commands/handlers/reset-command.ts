import { MODEL_PROVIDERS } from "../../agents/models/index.js";
import { type ModelCatalog, selectModel } from "../../sessions/model-selection.js";
import type { CommandOutcome } from "../command-context.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import { resetTriggerText } from "../parse-command.js";

/** Model family names people type without a provider ("gpt-x", "claude-3", "llama3.1:8b"). */
const MODEL_FAMILY = /^(?:gpt|chatgpt|claude|llama|mistral|mixtral|gemini|gemma|qwen|deepseek|o[1-9])(?:$|[-_.:0-9])/i;

/** True when `word` reads as a model name rather than as the first word of a message. */
export function looksLikeModel(word: string, catalog: ModelCatalog): boolean {
  const providers = new Set<string>([...MODEL_PROVIDERS, ...catalog.entries.map((e) => e.provider.toLowerCase())]);
  const lower = word.toLowerCase();
  const slash = /^([a-z0-9][a-z0-9._-]*)\/\S+$/.exec(lower);
  return providers.has(lower) || (slash !== null && providers.has(slash[1]!)) || MODEL_FAMILY.test(word);
}

/** The catalog as a list for people: `offline/echo, openai/gpt-4o-mini (mini)`. */
export function describeCatalog(catalog: ModelCatalog): string {
  return catalog.entries
    .map((e) => `${e.provider}/${e.model}${e.aliases?.length ? ` (${e.aliases.join(", ")})` : ""}`)
    .join(", ");
}

/**
 * The reply for a reset whose first word names a model the catalog does not have (the session is
 * then left alone); undefined when the words pick a model or are just the first message.
 */
export function unknownModelReply(rest: string, catalog: ModelCatalog): CommandOutcome | undefined {
  const first = /^\S+/.exec(rest.trim())?.[0];
  if (first === undefined || selectModel(rest, catalog).model || !looksLikeModel(first, catalog)) return undefined;
  return { reply: STRINGS.unknownModel(first, describeCatalog(catalog)) };
}

/**
 * An authorized reset as a value (docs/sessions.md): the model its first word picks and the rest as
 * the new session's first message; the turn's start applies it. An unknown model word is answered instead.
 */
function resetOutcome(command: { trigger: string; rest: string }, catalog: ModelCatalog): CommandOutcome {
  const unknown = unknownModelReply(command.rest, catalog);
  if (unknown) return unknown;
  const selection = selectModel(command.rest, catalog);
  return {
    reset: {
      firstMessage: selection.body,
      said: resetTriggerText(command),
      ...(selection.model && { model: selection.model }),
    },
  };
}

/** `/new [model] [text]`: a new session id, optionally on another model; the text is the first message. */
export const newCommand = defineCommand({
  name: "new",
  usage: "/new [model] [text]",
  summary:
    "Starts a new session here (the /send override survives); a model word picks its model; the text is its first message, else the agent greets.",
  access: "own-session",
  run: async (command, { catalog }) => resetOutcome(command, catalog),
});

/** `/reset [text]` and every `session.resetTriggers` entry: the same as `/new`. */
export const resetCommand = defineCommand({
  name: "reset",
  usage: "/reset [text]",
  summary: "The same as /new (so are the extra triggers in session.resetTriggers).",
  access: "own-session",
  run: async (command, { catalog }) => resetOutcome(command, catalog),
});
