import { describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { COMMAND_LIST } from "../../../src/commands/command-table.js";
import { helpText } from "../../../src/commands/handlers/help-command.js";
import { createCommandHarness, dm } from "../command-harness.js";

describe("helpText", () => {
  it("lists every command with its usage, who may run it and what it does", () => {
    const lines = helpText(COMMAND_LIST).split("\n");
    expect(lines[0]).toBe(STRINGS.helpTitle);
    expect(lines).toContain(`/send on|off|inherit (owners): ${COMMAND_LIST.find((c) => c.name === "send")!.summary}`);
    expect(lines).toHaveLength(COMMAND_LIST.length + 1);
  });
});

describe("helpCommand", () => {
  it("answers /help and /commands with the table", async () => {
    const h = await createCommandHarness();
    expect(await h.dispatch(dm("42", "/help"))).toEqual({ reply: helpText(COMMAND_LIST) });
    expect(await h.dispatch(dm("42", "/Commands"))).toEqual({ reply: helpText(COMMAND_LIST) });
  });
});
