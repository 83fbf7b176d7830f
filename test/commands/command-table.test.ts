import { describe, expect, it } from "vitest";
import { COMMANDS, COMMAND_LIST, ownerOnlyCommands } from "../../src/commands/command-table.js";
import { COMMAND_NAMES } from "../../src/commands/command-grammar.js";

describe("COMMANDS", () => {
  it("makes exactly /send, /cron, /pair and /queue owner-only", () => {
    expect(ownerOnlyCommands()).toEqual(["send", "cron", "pair", "queue"]);
  });

  it("lets owners, and others only in their own DM, start new sessions, compact and change model, thinking and verbose", () => {
    expect(COMMAND_LIST.filter((c) => c.access === "own-session").map((c) => c.name)).toEqual([
      "new",
      "reset",
      "compact",
      "model",
      "think",
      "verbose",
    ]);
  });

  it("has one row per command name, each with a usage line that starts with its name", () => {
    expect(Object.keys(COMMANDS).sort()).toEqual([...COMMAND_NAMES].sort());
    for (const command of COMMAND_LIST) {
      expect(command.usage.startsWith(`/${command.name}`)).toBe(true);
      expect(command.summary).not.toBe("");
    }
  });
});
