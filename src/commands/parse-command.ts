import type { BotIdentity } from "../delivery/channel-adapter.js";
import { effectiveResetTriggers, matchResetTrigger } from "../sessions/reset-triggers.js";
import { type CommandInvocation, type GrammarResult, applyGrammar } from "./command-grammar.js";

/** Who the bot is on one channel account, for `/cmd@bot` and leading mentions. Unknown parts match nothing. */
export type { BotIdentity } from "../delivery/channel-adapter.js";

/** What {@link parseCommand} needs besides the text. */
export interface ParseCommandOptions {
  bot?: BotIdentity;
  /** `session.resetTriggers`; `/new` and `/reset` always count */
  resetTriggers?: readonly string[];
  /** default false; whole-message "stop", "abort", "esc", "interrupt" mean `/stop` */
  bareAbortWords?: boolean;
}

/** Whole-message words that abort a run (`wait` and `exit` are ordinary words here; docs/commands.md). */
const ABORT_WORDS: ReadonlySet<string> = new Set(["stop", "abort", "esc", "interrupt"]);

const LEADING_MENTION = /^(?:<@!?(\d+)>|@([A-Za-z0-9_+.]+))\s+/;
const COMMAND_HEAD = /^\/([a-z0-9_-]+)(?:@([a-z0-9_]+))?(?=$|[\s:])/i;

const digits = (text: string) => text.replace(/\D/g, "");
const sameName = (a: string, b: string | undefined) =>
  b !== undefined && a.toLowerCase() === b.replace(/^@/, "").toLowerCase();

function isOurMention(match: RegExpExecArray, bot: BotIdentity): boolean {
  const [, discordId, word] = match;
  if (discordId !== undefined) return discordId === bot.botId;
  if (/^\+?\d+$/.test(word!)) return bot.botNumber !== undefined && digits(word!) === digits(bot.botNumber);
  return sameName(word!, bot.botUsername);
}

/**
 * The text without a leading mention of this bot; the text unchanged when it starts with no
 * mention; null when it starts with a mention of someone else (then it is not for us).
 */
function withoutMention(text: string, bot: BotIdentity): string | null {
  const match = LEADING_MENTION.exec(text);
  if (!match) return text;
  return isOurMention(match, bot) ? text.slice(match[0].length) : null;
}

/**
 * Reads `/name[@bot][:] args` at the very start of the text; null when the text does not start
 * with a slash command, or the command is addressed to another bot.
 */
export function readInvocation(text: string, bot: BotIdentity = {}): CommandInvocation | null {
  const match = COMMAND_HEAD.exec(text);
  if (!match) return null;
  const [head, name, addressedTo] = match;
  if (addressedTo !== undefined && !sameName(addressedTo, bot.botUsername)) return null;
  // Only spaces go: a line break right after the name keeps the first line empty (`/status\nmore`).
  return {
    name: name!.toLowerCase(),
    args: text
      .slice(head.length)
      .replace(/^:/, "")
      .replace(/^[ \t]+/, "")
      .trimEnd(),
  };
}

/**
 * The one command parser for every channel (docs/commands.md): the command
 * must open the message, after at most a mention of this bot; names are case-insensitive,
 * arguments keep their case; `/cmd: args` equals `/cmd args`; `/cmd@ThisBot` is ours and
 * `/cmd@OtherBot` is not; reset triggers take the rest of the message as written. Nothing before
 * the command is stripped (`Note: /new please` is plain text).
 *
 * Returns the command, a {@link CommandUsageError} for a known command with bad arguments, or
 * null for anything that is not a command for this bot. A native slash command from an adapter
 * is passed as a {@link CommandInvocation} and read the same way.
 */
export function parseCommand(input: string | CommandInvocation, options: ParseCommandOptions = {}): GrammarResult {
  const bot = options.bot ?? {};
  const text =
    typeof input === "string"
      ? withoutMention(input.trim(), bot)
      : `/${input.name}${input.args.trim() ? ` ${input.args.trim()}` : ""}`;
  if (text === null) return null;
  const trigger = matchResetTrigger(
    text,
    effectiveResetTriggers(options.resetTriggers),
    bot.botUsername ? { botUsername: bot.botUsername.replace(/^@/, "") } : {},
  );
  if (trigger) {
    const command = { trigger: trigger.trigger, rest: trigger.remainder };
    return trigger.trigger.toLowerCase() === "/new" ? { name: "new", ...command } : { name: "reset", ...command };
  }
  if (typeof input === "string" && options.bareAbortWords && ABORT_WORDS.has(text.trim().toLowerCase()))
    return { name: "stop", bare: true };
  const invocation = readInvocation(text, bot);
  return invocation ? applyGrammar(invocation) : null;
}

/** The text the session lifecycle should see for a reset: the trigger and the rest, mention and `@bot` removed. */
export function resetTriggerText(command: { trigger: string; rest: string }): string {
  return command.rest ? `${command.trigger} ${command.rest}` : command.trigger;
}
