import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";

/** `/cron [list|run <id>|enable <id>|disable <id>|rm <id>]`: the gateway's scheduled jobs (owners only). */
export const cronCommand = defineCommand({
  name: "cron",
  usage: "/cron [list|run <id>|enable <id>|disable <id>|rm <id>]",
  summary: "Lists the scheduled jobs with their next run; runs, enables, disables or removes one.",
  access: "owner",
  async run(command, { deps }) {
    const cron = deps.cron;
    if (!cron) return { reply: STRINGS.cronUnavailable };
    if (command.action === "list") {
      const jobs = cron.list();
      return {
        reply:
          jobs.length === 0
            ? STRINGS.cronNone
            : [STRINGS.cronTitle(jobs.length), ...jobs.map(STRINGS.cronLine)].join("\n"),
      };
    }
    if (!cron.list().some((job) => job.id === command.id)) return { reply: STRINGS.cronUnknown(command.id) };
    if (command.action === "run") return { reply: STRINGS.cronStarted(command.id, await cron.run(command.id)) };
    if (command.action === "rm")
      return {
        reply: (await cron.remove(command.id)) ? STRINGS.cronRemoved(command.id) : STRINGS.cronUnknown(command.id),
      };
    await cron.setEnabled(command.id, command.action === "enable");
    return { reply: STRINGS.cronEnabled(command.id, command.action === "enable") };
  },
});
