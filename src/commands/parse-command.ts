import { effectiveResetTriggers, matchResetTrigger } from "../sessions/reset-triggers.js";
import { type CommandInvocation, type GrammarResult, applyGrammar } from "./command-grammar.js";

/** What {@link parseCommand} needs besides the text. */
export interface ParseCommandOptions {
  /** `session.resetTriggers`; `/new` and `/reset` always count */
  resetTriggers?: readonly string[];
  /** default false; whole-message "stop", "abort", "esc", "interrupt" mean `/stop` */
  bareAbortWords?: boolean;
}

/** Whole-message words that abort a run (`wait` and `exit` are ordinary words here; docs/commands.md). */
const ABORT_WORDS: ReadonlySet<string> = new Set(["stop", "abort", "esc", "interrupt"]);

const COMMAND_HEAD = /^\/([a-z0-9_-]+)(?=$|[\s:])/i;

/**
 * Reads `/name[:] args` at the very start of the text; null when the text does not start with a
 * slash command. `/name@SomeBot` is not a command here: an adapter turns `/name@ThisBot` into
 * `/name` and leaves another bot's command as it is.
 */
export function readInvocation(text: string): CommandInvocation | null {
  const match = COMMAND_HEAD.exec(text);
  if (!match) return null;
  const [head, name] = match;
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
 * The one command parser for every channel (docs/commands.md): the command must open the
 * message; names are case-insensitive, arguments keep their case; `/cmd: args` equals
 * `/cmd args`; reset triggers take the rest of the message as written. Nothing before the command
 * is stripped (`Note: /new please` is plain text). The parser knows no platform's mention syntax:
 * each adapter strips a leading mention of its bot (and Telegram's `/cmd@ThisBot`) before the
 * text reaches the core (docs/architecture.md, "Adapter contract v2").
 *
 * Returns the command, a {@link CommandUsageError} for a known command with bad arguments, or
 * null for anything that is not a command for this bot. A native slash command from an adapter
 * is passed as a {@link CommandInvocation} and read the same way.
 */
export function parseCommand(input: string | CommandInvocation, options: ParseCommandOptions = {}): GrammarResult {
  const text =
    typeof input === "string" ? input.trim() : `/${input.name}${input.args.trim() ? ` ${input.args.trim()}` : ""}`;
  const trigger = matchResetTrigger(text, effectiveResetTriggers(options.resetTriggers));
  if (trigger) {
    const command = { trigger: trigger.trigger, rest: trigger.remainder };
    return trigger.trigger.toLowerCase() === "/new" ? { name: "new", ...command } : { name: "reset", ...command };
  }
  if (typeof input === "string" && options.bareAbortWords && ABORT_WORDS.has(text.trim().toLowerCase()))
    return { name: "stop", bare: true };
  const invocation = readInvocation(text);
  return invocation ? applyGrammar(invocation) : null;
}

/** A reset as the sender wrote it, the trigger and the rest (the transcript line of a greeting). */
export function resetTriggerText(command: { trigger: string; rest: string }): string {
  return command.rest ? `${command.trigger} ${command.rest}` : command.trigger;
}
