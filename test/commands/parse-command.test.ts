import { describe, expect, it } from "vitest";
import { CommandUsageError, type GrammarResult } from "../../src/commands/command-grammar.js";
import {
  type ParseCommandOptions,
  parseCommand,
  readInvocation,
  resetTriggerText,
} from "../../src/commands/parse-command.js";

/** A comparable form: usage errors as `{ usage, detail }`, everything else as is. */
const shape = (result: GrammarResult) =>
  result instanceof CommandUsageError ? { usage: result.command, detail: result.detail } : result;

const send = (mode: string) => ({ name: "send", mode });
const usage = (name: string, detail = "") => ({ usage: name, detail });
const newSession = (rest: string, trigger = "/new") => ({ name: "new", trigger, rest });
const ABORTS: ParseCommandOptions = { bareAbortWords: true };

describe("parseCommand", () => {
  // Command parsing and the /send grammar as docs/commands.md states them; a prefix before ": " in a
  // title is the rule the row shows.
  it.each<[string, string, unknown, ParseCommandOptions?]>([
    ["/send on", "/send on", send("allow")],
    ["the colon form", "/send: on", send("allow")],
    ["a typed usage error, not a command without a mode: /send alone", "/send", usage("send")],
    ["a typed usage error: /send:", "/send:", usage("send")],
    ["a bare word is text: send on", "send on", null],
    ["a bare word is text: send", "send", null],
    ["the name is case-insensitive", "/SEND OFF", send("deny")],
    ["deny", "/send deny", send("deny")],
    ["inherit", "/send inherit", send("inherit")],
    ["default means inherit", "/send default", send("inherit")],
    ["reset means inherit", "/send reset", send("inherit")],
    ["a typed usage error: an unknown mode", "/send maybe", usage("send", 'Unknown mode "maybe".')],
    ["extra words are text", "/send on now", null],
    ["a non-letter mode is text", "/send 1", null],
    ["a command for a bot we cannot name is not ours", "/send@bot on", null],
    ["surrounding spaces", "  /send   off  ", send("deny")],
    ["no /activation here: stays text", "/activation mention", null],
    ["bare words are text: help", "help", null],
    ["bare words are text: status", "status", null],
    ["bare words are text: compact", "compact", null],
    ["/commands is /help", "/commands", { name: "help" }],
    ["/commands:", "/commands:", { name: "help" }],
    ["/status", "/status", { name: "status" }],
    ["/status:", "/status:", { name: "status" }],
    ["/compact", "/compact", { name: "compact", instructions: "" }],
    ["/compact:", "/compact:", { name: "compact", instructions: "" }],
    ["text before a command", "hello /status", null],
    ["words after a command that takes none", "/status please", null],
    ["a prefix before /send", "prefix /send on", null],
    ["no /config or /debug here", "/config show", null],
    ["a command for another bot", "/help@otherbot", null],
    ["no inline shortcuts: an inline /status is text", "hey /status", null],
    ["/help takes no arguments: /help@moltbot args is text", "/help@moltbot args", null],
    ["/help@moltbot: args is text", "/help@moltbot: args", null],
    ["another bot's /help", "/help@otherbot", null],
    ["no /dock commands here", "/dock_telegram", null],
    ["/STOP", "/STOP", { name: "stop", bare: false }],
    ["/stop now is text", "/stop now", null],
    ["/reset: hard", "/reset: hard", { name: "reset", trigger: "/reset", rest: "hard" }],
    ["a command on the first line, a note below", "/status\nextra line", { name: "status" }],
    ["/thinking is /think", "/thinking high", { name: "think", level: "high" }],
    ["no /whoami here", "/id", null],
    ["/NEW with spaces", "  /NEW  ", newSession("")],
    ["/new gpt", "/new gpt", newSession("gpt")],
    ["a bare stop is text unless abort words are on", "stop", null],
    ["no prefix stripping: a timestamp before stop", "[Dec 5 10:00] stop", null, ABORTS],
    ["no prefix stripping: a label before /new", "Jake: /new", null],
    ["a mention of a bot we cannot name", "@mybot /new", null],
    ["a mention of someone else", "@alice /send off", null],
    ["a Discord mention of someone else", "<@999> /status", null],
    ["abort word stop", "stop", { name: "stop", bare: true }, ABORTS],
    ["abort word esc", "esc", { name: "stop", bare: true }, ABORTS],
    ["abort word abort", "abort", { name: "stop", bare: true }, ABORTS],
    ["abort word interrupt", "interrupt", { name: "stop", bare: true }, ABORTS],
    ["wait and exit are ordinary words: wait is not an abort word", "wait", null, ABORTS],
    ["wait and exit are ordinary words: exit is not an abort word", "exit", null, ABORTS],
    ["hello", "hello", null, ABORTS],
    ["/stop is the command, not a bare word", "/stop", { name: "stop", bare: false }, ABORTS],
    ["STOP with a space", "STOP ", { name: "stop", bare: true }, ABORTS],
    ["stop please", "stop please", null, ABORTS],
    ["Stop!", "Stop!", null, ABORTS],
  ])("%s", (_name, text, expected, options) => {
    expect(shape(parseCommand(text, options))).toEqual(expected);
  });

  // Reset triggers (as src/sessions/reset-triggers.ts decides them).
  it.each<[string, string, unknown, ParseCommandOptions?]>([
    ["/newx is another word", "/newx", null],
    ["the colon form is the same command everywhere: /new:", "/new:", newSession("")],
    [
      "/new always works: a configured trigger",
      "/fresh start",
      { name: "reset", trigger: "/fresh", rest: "start" },
      { resetTriggers: ["/fresh"] },
    ],
    ["/new next to a configured trigger", "/new", newSession(""), { resetTriggers: ["/fresh"] }],
    ["no lossy prefix stripping", "Note: /new please", null],
    ["the rest is passed on as written", "/new summarize [draft]\nline2", newSession("summarize [draft]\nline2")],
  ])("%s", (_name, text, expected, options) => {
    expect(shape(parseCommand(text, options))).toEqual(expected);
  });

  it.each<[string, string, unknown]>([
    ["/context alone is its help", "/context", { name: "context", mode: "help" }],
    ["/context list", "/context list", { name: "context", mode: "list" }],
    ["/context show is list", "/context show", { name: "context", mode: "list" }],
    ["/context detail", "/context detail", { name: "context", mode: "detail" }],
    ["/context deep is detail", "/context deep", { name: "context", mode: "detail" }],
    ["/context json", "/context JSON", { name: "context", mode: "json" }],
    ["an unknown /context mode", "/context bogus", usage("context", "Unknown /context mode.")],
    ["/subagents lists", "/subagents", { name: "subagents", action: "list" }],
    ["/subagents list", "/subagents list", { name: "subagents", action: "list" }],
    ["/subagents stop all", "/subagents stop ALL", { name: "subagents", action: "stop", target: "all" }],
    [
      "/subagents stop keeps the id's case",
      "/subagents stop Ab12",
      { name: "subagents", action: "stop", target: "Ab12" },
    ],
    ["/subagents with an unknown action", "/subagents kill 2", usage("subagents")],
    [
      "/compact keeps its instructions as written",
      "/compact Focus on decisions\nand dates",
      { name: "compact", instructions: "Focus on decisions\nand dates" },
    ],
    ["an unknown command is text", "/frobnicate", null],
    ["a slash alone is text", "/ status", null],
  ])("%s", (_name, text, expected) => {
    expect(shape(parseCommand(text))).toEqual(expected);
  });

  it("reads a native slash command from an adapter the same way as typed text", () => {
    expect(parseCommand({ name: "send", args: "off" })).toEqual(send("deny"));
    expect(parseCommand({ name: "STOP", args: "" })).toEqual({ name: "stop", bare: false });
    expect(parseCommand({ name: "new", args: "gpt-4o hi" })).toEqual(newSession("gpt-4o hi"));
    expect(shape(parseCommand({ name: "send", args: "" }))).toEqual(usage("send"));
    expect(parseCommand({ name: "stop", args: "" }, ABORTS)).toEqual({ name: "stop", bare: false });
  });
});

describe("readInvocation", () => {
  it("splits the name from its arguments and keeps the following lines", () => {
    expect(readInvocation("/Compact: keep dates\nand names")).toEqual({
      name: "compact",
      args: "keep dates\nand names",
    });
    expect(readInvocation("/status\nmore")).toEqual({ name: "status", args: "\nmore" });
    expect(readInvocation("hello")).toBeNull();
  });
});

describe("resetTriggerText", () => {
  it("writes the trigger and its rest for the session lifecycle", () => {
    expect(resetTriggerText({ trigger: "/new", rest: "gpt-4o hi" })).toBe("/new gpt-4o hi");
    expect(resetTriggerText({ trigger: "/fresh", rest: "" })).toBe("/fresh");
  });
});
