import type { Command } from "commander";
import type { SetAsideView } from "../inbound/inbox-rows.js";
import { askGateway } from "./ask-gateway.js";
import { type CliIo, cliPaths, loadCliConfig, out } from "./cli-io.js";
import { withCliState } from "./cli-state.js";
import { connectCli, printJson } from "./connect-cli.js";
import { findGateway } from "./gateway-target.js";
import { readSetAside } from "./inbox-report.js";
import { formatAge } from "./open-stores.js";

interface InboxFlags {
  json?: boolean;
  url?: string;
  token?: string;
}

/** One set-aside entry in a line or two. */
function describe(entry: SetAsideView, now: number): string {
  const text = entry.text.length > 60 ? `${entry.text.slice(0, 59)}…` : entry.text;
  return `${entry.id}  ${entry.channel}:${entry.chatId} from ${entry.senderId}, set aside ${formatAge(now - entry.setAsideAt)} ago after ${entry.starts} starts${entry.sessionKey ? ` (session ${entry.sessionKey})` : ""}\n  "${text}": ${entry.reason}`;
}

/** The running gateway's set-aside entries, or the state's read-only when no gateway answers. */
async function listEntries(io: CliIo, configFlag: string | undefined, flags: InboxFlags): Promise<SetAsideView[]> {
  const { config } = await loadCliConfig(io, configFlag);
  const live = await askGateway<{ entries: SetAsideView[] }>(
    await findGateway(io, config, configFlag, flags),
    "inbox.list",
  );
  if (live.value) return live.value.entries;
  const paths = cliPaths(io, configFlag);
  return withCliState(io, config, paths, ({ state }) => readSetAside(state, paths));
}

function withGateway(command: Command): Command {
  return command
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token")
    .option("--json", "print JSON");
}

/** `switchboard inbox list|retry|drop`: messages set aside because their turn stopped the gateway at every start. */
export function registerInboxCommand(program: Command, io: CliIo, now: () => number): void {
  const inbox = program.command("inbox").description("set-aside inbound messages: list, retry, drop");
  const call = async (cmd: Command, flags: InboxFlags, method: string, id: string): Promise<unknown> => {
    const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
    try {
      return await client.call(method, { id });
    } finally {
      await client.close();
    }
  };

  withGateway(
    inbox.command("list").description("messages set aside (from the gateway, or the state when none runs)"),
  ).action(async (flags: InboxFlags, cmd: Command) => {
    const entries = await listEntries(io, cmd.optsWithGlobals().config, flags);
    if (flags.json) return printJson(io, { entries });
    if (entries.length === 0) return out(io, "No messages set aside.");
    for (const entry of entries) out(io, describe(entry, now()));
  });

  withGateway(
    inbox.command("retry <id>").description("run a set-aside message again (needs a running gateway)"),
  ).action(async (id: string, flags: InboxFlags, cmd: Command) => {
    const result = await call(cmd, flags, "inbox.retry", id);
    if (flags.json) printJson(io, result);
    else out(io, `retrying ${id}`);
  });

  withGateway(inbox.command("drop <id>").description("forget a set-aside message (needs a running gateway)")).action(
    async (id: string, flags: InboxFlags, cmd: Command) => {
      const result = await call(cmd, flags, "inbox.drop", id);
      if (flags.json) printJson(io, result);
      else out(io, `dropped ${id}`);
    },
  );
}
