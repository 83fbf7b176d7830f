import { QUEUE_MODES } from "../config/queue-modes.js";
import { SwitchboardError } from "../errors.js";
/** Every command this layer knows, by canonical name (no slash). */
export const COMMAND_NAMES = [
  "help",
  "status",
  "send",
  "stop",
  "new",
  "reset",
  "compact",
  "context",
  "subagents",
  "model",
  "think",
  "verbose",
  "cron",
  "pair",
  "queue",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** `/send` modes, as stored: `allow` and `deny` set the override, `inherit` removes it. */
type SendMode = "allow" | "deny" | "inherit";
/** `/context` views. */
type ContextMode = "help" | "list" | "detail" | "json";

/** A command with its arguments read by the command's grammar. */
type ParsedCommand =
  | { name: "help" }
  | { name: "status" }
  /** `bare`: a whole-message abort word ("stop", "abort", ...), not `/stop` */
  | { name: "stop"; bare: boolean }
  | { name: "send"; mode: SendMode }
  /** `trigger` as configured (`/new`, `/fresh`); `rest` is what follows it, as written */
  | { name: "new"; trigger: string; rest: string }
  | { name: "reset"; trigger: string; rest: string }
  | { name: "compact"; instructions: string }
  | { name: "context"; mode: ContextMode }
  | { name: "subagents"; action: "list" }
  /** `target`: "all", a run id (or its start), or a 1-based position in the list */
  | { name: "subagents"; action: "stop"; target: string }
  /** `target` absent: list the models */
  | { name: "model"; target?: string }
  /** `level` absent: show the current level */
  | { name: "think"; level?: ThinkLevel }
  | { name: "verbose"; on?: boolean }
  | { name: "cron"; action: "list" }
  /** `id`: a job id, as `/cron` lists it */
  | { name: "cron"; action: "run" | "enable" | "disable" | "rm"; id: string }
  | { name: "pair"; action: "list" }
  /** `code`: as typed, uppercased (codes are case-insensitive) */
  | { name: "pair"; action: "approve" | "deny"; code: string }
  /** `mode` absent: show the session's mode and where it comes from; `inherit` removes the override */
  | { name: "queue"; mode?: QueueModeWord };

/** `/queue` words: a mode of `session.queue`, or `inherit` (back to the config). */
type QueueModeWord = (typeof QUEUE_MODES)[number] | "inherit";
const QUEUE_WORDS: Readonly<Record<string, QueueModeWord>> = {
  ...Object.fromEntries(QUEUE_MODES.map((mode) => [mode, mode])),
  inherit: "inherit",
  default: "inherit",
  reset: "inherit",
};

/** `/think` levels, as stored on the session entry. */
type ThinkLevel = "off" | "minimal" | "low" | "medium" | "high";

/** The parsed form of one command. */
export type CommandOf<N extends CommandName> = Extract<ParsedCommand, { name: N }>;

/** The message is this command, but its arguments do not fit: the dispatcher answers with the usage. */
export class CommandUsageError extends SwitchboardError {
  constructor(
    readonly command: CommandName,
    /** what was wrong, shown before the usage line; empty when the usage says it all */
    readonly detail = "",
  ) {
    super("INVALID_ARGUMENT", detail || `bad arguments for /${command}`);
    this.name = "CommandUsageError";
  }
}

/** A command name and its raw argument text: what text detection yields and what a native slash command is. */
export interface CommandInvocation {
  /** without the slash, any case (`"send"`) */
  name: string;
  /** everything after the name, as written; following lines included */
  args: string;
}

/** What a grammar makes of an invocation: the command, a usage error, or "not a command after all". */
export type GrammarResult = ParsedCommand | CommandUsageError | null;

const SEND_MODES: Readonly<Record<string, SendMode>> = {
  on: "allow",
  allow: "allow",
  off: "deny",
  deny: "deny",
  inherit: "inherit",
  default: "inherit",
  reset: "inherit",
};
const CONTEXT_MODES: Readonly<Record<string, ContextMode>> = {
  "": "help",
  help: "help",
  list: "list",
  show: "list",
  detail: "detail",
  deep: "detail",
  json: "json",
};
const THINK_LEVELS: Readonly<Record<string, ThinkLevel>> = {
  off: "off",
  none: "off",
  min: "minimal",
  minimal: "minimal",
  on: "low",
  low: "low",
  medium: "medium",
  med: "medium",
  high: "high",
  max: "high",
};
const VERBOSE_MODES: Readonly<Record<string, boolean>> = { on: true, true: true, full: true, off: false, false: false };
/** Other names people type for a command (`/thinking`, `/t`, `/v`; docs/commands.md). */
const ALIASES: Readonly<Record<string, CommandName>> = {
  commands: "help",
  thinking: "think",
  t: "think",
  v: "verbose",
  models: "model",
};

const firstLine = (args: string) => args.split("\n", 1)[0]!.trim();
const noArgs =
  <C extends ParsedCommand>(command: C) =>
  (args: string): C | null =>
    firstLine(args) === "" ? command : null;

/**
 * Argument grammars, one per command. A command that takes no arguments is plain text when words
 * follow it on its line (`/status please`); fixed grammars read the first line only.
 */
const GRAMMARS: { readonly [N in CommandName]: (args: string) => CommandOf<N> | CommandUsageError | null } = {
  help: noArgs({ name: "help" }),
  status: noArgs({ name: "status" }),
  stop: noArgs({ name: "stop", bare: false }),
  send(args) {
    // `/send` takes one alphabetic word or nothing; digits or extra words make it plain text.
    const word = firstLine(args);
    if (word === "") return new CommandUsageError("send");
    if (!/^[a-z]+$/i.test(word)) return null;
    const mode = SEND_MODES[word.toLowerCase()];
    return mode ? { name: "send", mode } : new CommandUsageError("send", `Unknown mode "${word}".`);
  },
  new: (args) => ({ name: "new", trigger: "/new", rest: args.trim() }),
  reset: (args) => ({ name: "reset", trigger: "/reset", rest: args.trim() }),
  compact: (args) => ({ name: "compact", instructions: args.trim() }),
  context(args) {
    const mode = CONTEXT_MODES[firstLine(args).toLowerCase()];
    return mode ? { name: "context", mode } : new CommandUsageError("context", "Unknown /context mode.");
  },
  subagents(args) {
    const words = firstLine(args).split(/\s+/).filter(Boolean);
    if (words.length === 0 || (words.length === 1 && words[0]!.toLowerCase() === "list"))
      return { name: "subagents", action: "list" };
    if (words.length === 2 && words[0]!.toLowerCase() === "stop")
      return { name: "subagents", action: "stop", target: words[1]!.toLowerCase() === "all" ? "all" : words[1]! };
    return new CommandUsageError("subagents");
  },
  model: (args) => (firstLine(args) === "" ? { name: "model" } : { name: "model", target: firstLine(args) }),
  think(args) {
    const read = oneWord("think", THINK_LEVELS, args);
    return read instanceof CommandUsageError ? read : { name: "think", ...(read.value && { level: read.value }) };
  },
  verbose(args) {
    const read = oneWord("verbose", VERBOSE_MODES, args);
    return read instanceof CommandUsageError
      ? read
      : { name: "verbose", ...(read.value !== undefined && { on: read.value }) };
  },
  cron(args) {
    const words = firstLine(args).split(/\s+/).filter(Boolean);
    if (words.length === 0 || (words.length === 1 && words[0]!.toLowerCase() === "list"))
      return { name: "cron", action: "list" };
    const action = words[0]!.toLowerCase();
    if (words.length === 2 && (action === "run" || action === "enable" || action === "disable" || action === "rm"))
      return { name: "cron", action, id: words[1]! };
    return new CommandUsageError("cron");
  },
  pair(args) {
    const words = firstLine(args).split(/\s+/).filter(Boolean);
    if (words.length === 0 || (words.length === 1 && words[0]!.toLowerCase() === "list"))
      return { name: "pair", action: "list" };
    const action = words[0]!.toLowerCase();
    if (words.length === 2 && (action === "approve" || action === "deny"))
      return { name: "pair", action, code: words[1]!.toUpperCase() };
    return new CommandUsageError("pair");
  },
  queue(args) {
    const read = oneWord("queue", QUEUE_WORDS, args);
    return read instanceof CommandUsageError ? read : { name: "queue", ...(read.value && { mode: read.value }) };
  },
};

/** Reads one optional word with a table: absent gives `{}`, a known word its value, anything else a usage error. */
function oneWord<T>(
  command: CommandName,
  table: Readonly<Record<string, T>>,
  args: string,
): { value?: T } | CommandUsageError {
  const word = firstLine(args).toLowerCase();
  if (word === "") return {};
  const value = table[word];
  return value === undefined ? new CommandUsageError(command, `Unknown value "${firstLine(args)}".`) : { value };
}

/** The canonical name of `name` (case-insensitive, aliases resolved), or undefined for a command we do not know. */
export function commandNameOf(name: string): CommandName | undefined {
  const lower = name.toLowerCase();
  return (COMMAND_NAMES as readonly string[]).includes(lower) ? (lower as CommandName) : ALIASES[lower];
}

/** Reads an invocation's arguments with its command's grammar; null for unknown commands. */
export function applyGrammar(invocation: CommandInvocation): GrammarResult {
  const name = commandNameOf(invocation.name);
  return name ? GRAMMARS[name](invocation.args) : null;
}
