import type { Command } from "commander";
import { type CliIo, CliExit, ExitCode, parseJsonFlag } from "./cli-io.js";
import { connectCli, printJson } from "./connect-cli.js";

/** `switchboard tools invoke <name> --args <json>`: runs a session tool through the gateway. */
export function registerToolsCommand(program: Command, io: CliIo): void {
  const tools = program.command("tools").description("run session tools through the gateway");
  tools
    .command("invoke <name>")
    .description("invoke a session tool (sessions_list, sessions_history, sessions_send, sessions_spawn, agents_list)")
    .option("--args <json>", "tool arguments as JSON", "{}")
    .option("--session <key>", "act on behalf of this session (default the main session)")
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(
      async (name: string, flags: { args: string; session?: string; url?: string; token?: string }, cmd: Command) => {
        const args = parseJsonFlag(io, "args", flags.args);
        const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
        try {
          const result = await client.call<{ status?: string }>("tools.invoke", {
            tool: name,
            args,
            ...(flags.session && { sessionKey: flags.session }),
          });
          printJson(io, result);
          if (result?.status === "error" || result?.status === "forbidden") throw new CliExit(ExitCode.failure);
        } finally {
          await client.close();
        }
      },
    );
}
