import { type CommandDefinition, defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";

/** The command table as text: usage, who may run it, what it does. */
export function helpText(commands: readonly CommandDefinition[]): string {
  return [
    STRINGS.helpTitle,
    ...commands.map((c) => `${c.usage} (${STRINGS.accessLabel[c.access]}): ${c.summary}`),
  ].join("\n");
}

/** `/help` over the table `commands` returns (read when it runs, so the table can include it). */
export function createHelpCommand(commands: () => readonly CommandDefinition[]) {
  return defineCommand({
    name: "help",
    usage: "/help",
    summary: "Lists these commands (also /commands).",
    access: "commands",
    run: async () => ({ reply: helpText(commands()) }),
  });
}
