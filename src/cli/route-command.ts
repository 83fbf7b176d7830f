import { type Command, Option } from "commander";
import type { RouteInput } from "../routing/index.js";
import { type CliIo, CliExit, ExitCode, err, loadCliConfig, out, readStdin } from "./cli-io.js";

interface RouteFlags {
  channel?: string;
  account?: string;
  chatType?: "direct" | "group" | "channel";
  chatId?: string;
  sender?: string;
  topic?: string;
  thread?: string;
  guild?: string;
  json?: boolean;
}

function fromFlags(io: CliIo, flags: RouteFlags & { channel: string }): RouteInput {
  const chatType = flags.chatType ?? "direct";
  const peerId = chatType === "direct" ? (flags.sender ?? flags.chatId) : flags.chatId;
  if (chatType !== "direct" && !peerId) {
    err(io, `--chat-id is required for --chat-type ${chatType}`);
    throw new CliExit(ExitCode.badInput);
  }
  return {
    channel: flags.channel,
    accountId: flags.account,
    peer: peerId ? { kind: chatType === "direct" ? "dm" : chatType, id: peerId } : undefined,
    guildId: flags.guild,
    topicId: flags.topic,
    threadId: flags.thread,
  };
}

async function fromStdin(io: CliIo): Promise<RouteInput> {
  if (io.stdin.isTTY) {
    err(io, "give --channel (and --chat-type, --chat-id, ...) or pipe an inbound message as JSON on stdin");
    throw new CliExit(ExitCode.badInput);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readStdin(io));
  } catch (error) {
    err(io, `stdin: not valid JSON: ${(error as Error).message}`);
    throw new CliExit(ExitCode.badInput);
  }
  const [{ formatPath }, { InboundMessageSchema, routeInputFromInbound }] = await Promise.all([
    import("../config/format-issues.js"), // loaded with the command, not at start (src/cli/main.ts)
    import("../routing/index.js"),
  ]);
  const parsed = InboundMessageSchema.safeParse(raw);
  if (!parsed.success) {
    err(io, "stdin: not an inbound message:");
    for (const issue of parsed.error.issues) err(io, `  ${formatPath(issue.path)}: ${issue.message}`);
    throw new CliExit(ExitCode.badInput);
  }
  return routeInputFromInbound(parsed.data);
}

/** Prints the agent and session key the message of the flags (or stdin) lands in. */
async function routeAction(io: CliIo, flags: RouteFlags, cmd: Command): Promise<void> {
  const loaded = await loadCliConfig(io, cmd.optsWithGlobals().config);
  const input = flags.channel ? fromFlags(io, { ...flags, channel: flags.channel }) : await fromStdin(io);
  const { resolveAgentRoute } = await import("../routing/index.js"); // loaded with the command, not at start (src/cli/main.ts)
  const route = resolveAgentRoute(loaded.config, input);
  const binding = route.bindingIndex === undefined ? undefined : loaded.config.bindings[route.bindingIndex];
  const result = {
    sessionKey: route.sessionKey,
    agentId: route.agentId,
    matchedBy: route.matchedBy,
    kind: route.parsed.kind,
    channel: route.channel,
    accountId: route.accountId,
    mainSessionKey: route.mainSessionKey,
    ...(binding && { binding: { index: route.bindingIndex, ...binding } }),
  };
  if (flags.json) return out(io, JSON.stringify(result, null, 2));
  out(io, `sessionKey  ${result.sessionKey}`);
  out(io, `agentId     ${result.agentId}`);
  out(
    io,
    `matchedBy   ${result.matchedBy}${binding ? ` (bindings[${route.bindingIndex}]: ${JSON.stringify(binding.match)})` : ""}`,
  );
  out(io, `kind        ${result.kind}`);
  out(io, `channel     ${result.channel} (account ${result.accountId})`);
}

/** `switchboard route`: where would this message land? */
export function registerRouteCommand(program: Command, io: CliIo): void {
  program
    .command("route")
    .description(
      "show the agent and session key a message would land in (flags, or an inbound message as JSON on stdin)",
    )
    .option("--channel <name>", "telegram, discord, whatsapp, webchat, ...")
    .option("--account <id>", "bot account id", undefined)
    .addOption(
      new Option("--chat-type <type>", "kind of chat").choices(["direct", "group", "channel"]).default("direct"),
    )
    .option("--chat-id <id>", "platform chat id (group or channel id; the DM peer when --sender is absent)")
    .option("--sender <id>", "sender id (the DM peer)")
    .option("--topic <id>", "forum topic id (Telegram)")
    .option("--thread <id>", "thread id (adds :thread:<id>)")
    .option("--guild <id>", "Discord guild id")
    .option("--json", "print a JSON object")
    .action(async (flags: RouteFlags, cmd: Command) => routeAction(io, flags, cmd));
}
