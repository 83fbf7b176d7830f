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
  // The command-parsing vectors of the system we re-implement (and the /send grammar), rewritten where
  // docs/commands.md differs.
  it.each<[string, string, unknown, ParseCommandOptions?]>([
    ["V176 /send on", "/send on", send("allow")],
    ["V176 the colon form", "/send: on", send("allow")],
    ["V177 (changed: a typed usage error, not a command without a mode) /send alone", "/send", usage("send")],
    ["V177 (changed: a typed usage error) /send:", "/send:", usage("send")],
    ["V178 a bare word is text", "send on", null],
    ["V178 a bare word is text", "send", null],
    ["V179 the name is case-insensitive", "/SEND OFF", send("deny")],
    ["V179 deny", "/send deny", send("deny")],
    ["V180 inherit", "/send inherit", send("inherit")],
    ["V180 default means inherit", "/send default", send("inherit")],
    ["V180 reset means inherit", "/send reset", send("inherit")],
    ["V181 (changed: a typed usage error) an unknown mode", "/send maybe", usage("send", 'Unknown mode "maybe".')],
    ["V182 extra words are text", "/send on now", null],
    ["V182 a non-letter mode is text", "/send 1", null],
    ["V182 a command for a bot we cannot name is not ours", "/send@bot on", null],
    ["V183 surrounding spaces", "  /send   off  ", send("deny")],
    ["V184 (changed: no /activation here) stays text", "/activation mention", null],
    ["V185 bare words are text: help", "help", null],
    ["V185 bare words are text: status", "status", null],
    ["V185 bare words are text: compact", "compact", null],
    ["V186 /commands is /help", "/commands", { name: "help" }],
    ["V186 /commands:", "/commands:", { name: "help" }],
    ["V186 /status", "/status", { name: "status" }],
    ["V186 /status:", "/status:", { name: "status" }],
    ["V186 /compact", "/compact", { name: "compact", instructions: "" }],
    ["V186 /compact:", "/compact:", { name: "compact", instructions: "" }],
    ["V187 text before a command", "hello /status", null],
    ["V187 words after a command that takes none", "/status please", null],
    ["V187 a prefix before /send", "prefix /send on", null],
    ["V188 (changed: no /config or /debug here)", "/config show", null],
    ["V189 a command for another bot", "/help@otherbot", null],
    ["V190 (changed: no inline shortcuts) an inline /status is text", "hey /status", null],
    ["V191 (changed: /help takes no arguments) /help@moltbot args is text", "/help@moltbot args", null],
    ["V191 (changed) /help@moltbot: args is text", "/help@moltbot: args", null],
    ["V192 another bot's /help", "/help@otherbot", null],
    ["V192 (changed: no /dock commands here)", "/dock_telegram", null],
    ["V193 /STOP", "/STOP", { name: "stop", bare: false }],
    ["V193 /stop now is text", "/stop now", null],
    ["V194 /reset: hard", "/reset: hard", { name: "reset", trigger: "/reset", rest: "hard" }],
    ["V194 a command on the first line, a note below", "/status\nextra line", { name: "status" }],
    ["V194 /thinking is /think", "/thinking high", { name: "think", level: "high" }],
    ["V194 (changed: no /whoami here)", "/id", null],
    ["V194 /NEW with spaces", "  /NEW  ", newSession("")],
    ["V196 /new gpt", "/new gpt", newSession("gpt")],
    ["V196 a bare stop is text unless abort words are on", "stop", null],
    ["V197 (changed: no prefix stripping) a timestamp before stop", "[Dec 5 10:00] stop", null, ABORTS],
    ["V197 (changed: no prefix stripping) a label before /new", "Jake: /new", null],
    ["V198 a mention of a bot we cannot name", "@mybot /new", null],
    ["V198 a mention of someone else", "@alice /send off", null],
    ["V198 a Discord mention of someone else", "<@999> /status", null],
    ["V216 abort word stop", "stop", { name: "stop", bare: true }, ABORTS],
    ["V216 abort word esc", "esc", { name: "stop", bare: true }, ABORTS],
    ["V216 abort word abort", "abort", { name: "stop", bare: true }, ABORTS],
    ["V216 abort word interrupt", "interrupt", { name: "stop", bare: true }, ABORTS],
    ["V216 (changed: wait and exit are ordinary words) wait is not an abort word", "wait", null, ABORTS],
    ["V216 (changed: wait and exit are ordinary words) exit is not an abort word", "exit", null, ABORTS],
    ["V216 hello", "hello", null, ABORTS],
    ["V216 /stop is the command, not a bare word", "/stop", { name: "stop", bare: false }, ABORTS],
    ["V217 STOP with a space", "STOP ", { name: "stop", bare: true }, ABORTS],
    ["V217 stop please", "stop please", null, ABORTS],
    ["V217 Stop!", "Stop!", null, ABORTS],
  ])("%s", (_name, text, expected, options) => {
    expect(shape(parseCommand(text, options))).toEqual(expected);
  });

  // Reset triggers (as src/sessions/reset-triggers.ts decides them).
  it.each<[string, string, unknown, ParseCommandOptions?]>([
    ["V144 /newx is another word", "/newx", null],
    ["V144 (changed: the colon form is the same command everywhere) /new:", "/new:", newSession("")],
    [
      "V146 (changed: /new always works) a configured trigger",
      "/fresh start",
      { name: "reset", trigger: "/fresh", rest: "start" },
      { resetTriggers: ["/fresh"] },
    ],
    ["V146 (changed) /new next to a configured trigger", "/new", newSession(""), { resetTriggers: ["/fresh"] }],
    ["V149 (changed: no lossy prefix stripping)", "Note: /new please", null],
    [
      "V150 (changed: the rest is passed on as written)",
      "/new summarize [draft]\nline2",
      newSession("summarize [draft]\nline2"),
    ],
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
    ["V213 an unknown /context mode", "/context bogus", usage("context", "Unknown /context mode.")],
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
