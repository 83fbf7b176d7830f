import { randomUUID } from "node:crypto";
import readline from "node:readline";
import type { Command } from "commander";
import { type CliIo, CliExit, ExitCode, err, out } from "./cli-io.js";
import { type ChatConnection, GatewayGoneError, connectChat, runEnd } from "./chat-connection.js";
import type { GatewayClient } from "./gateway-client.js";
import {
  type ChatEvent,
  type ChatTurns,
  newChatTurns,
  showAskedEnd,
  showDelivery,
  showUnknownRun,
} from "./chat-turns.js";

interface HistoryMessage {
  role: string;
  content: unknown;
}

type Part = { type: string; text?: string; name?: string };

/** A history message as terminal lines: its text, and one line per tool call; tool results are left to the reply after them. */
function historyLines(message: HistoryMessage): string[] {
  if (message.role === "toolResult") return [];
  const who = message.role === "user" ? "you" : "agent";
  if (typeof message.content === "string") return message.content.trim() ? [`${who}: ${message.content}`] : [];
  const parts = message.content as Part[];
  const text = parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
  const calls = parts.filter((p) => p.type === "toolCall").map((p) => `${who}: [called ${p.name}]`);
  return [...(text.trim() ? [`${who}: ${text}`] : []), ...calls];
}

/** Prints the session's header, then its last messages, and returns its canonical key. */
async function showHistory(io: CliIo, client: GatewayClient, sessionKey: string): Promise<string> {
  const history = await client.call<{ sessionKey: string; messages: HistoryMessage[] }>("chat.history", {
    sessionKey,
    limit: 8,
    includeTools: true,
  });
  out(io, `-- ${history.sessionKey} (Ctrl-D to leave)`);
  for (const message of history.messages) for (const line of historyLines(message)) out(io, line);
  return history.sessionKey;
}

/**
 * Prints the session's events as they come: every reply, notice and announce is a delivery (a
 * failed run's notice too); a command from another client is echoed; a run's end is handed to
 * whoever waits for it.
 */
function showEvents(io: CliIo, client: GatewayClient, sessionKey: string, turns: ChatTurns): void {
  client.onEvent((event, payload) => {
    const delivered = payload as { sessionKey: string; text: string; messageId: string };
    if (event === "chat.delivery" && delivered.sessionKey === sessionKey) return showDelivery(io, turns, delivered);
    const chat = payload as ChatEvent;
    if (event !== "chat" || chat.sessionKey !== sessionKey || chat.state === "announce") return;
    if (chat.command) {
      if (!turns.sentCommands.has(chat.runId)) out(io, `${chat.role === "user" ? "you" : "agent"}: ${chat.text ?? ""}`);
      return;
    }
    const resolve = turns.waiting.get(chat.runId);
    if (resolve) resolve(chat);
    else turns.ended.set(chat.runId, chat);
  });
}

/**
 * Sends one line and waits for its run to end (its reply was printed as it was delivered); a run's
 * end adds only an abort. After a reconnect the end comes from `agent.wait`, and a reply delivered
 * while no connection was subscribed is printed from it.
 */
async function sendLine(io: CliIo, client: ChatConnection, sessionKey: string, line: TypedLine, turns: ChatTurns) {
  const { message } = line;
  const idempotencyKey = randomUUID();
  turns.sentCommands.add(idempotencyKey);
  const result = await client.call<{ runId: string; status: string; reply?: string }>("chat.send", {
    sessionKey,
    message,
    idempotencyKey,
  });
  line.sent = true;
  if (result.status === "command") {
    if (result.reply) out(io, `agent: ${result.reply}`);
    return;
  }
  turns.sentCommands.delete(idempotencyKey);
  if (result.status !== "started" && result.status !== "duplicate") return;
  const { ended, waiting } = turns;
  const event = new Promise<ChatEvent>((resolve) => waiting.set(result.runId, resolve));
  // "duplicate": sent again after a reconnect, and the gateway had it already: ask how it ended.
  const chat = ended.get(result.runId) ?? (await runEnd(client, result.runId, event, result.status === "duplicate"));
  waiting.delete(result.runId);
  ended.delete(result.runId);
  if (!chat) return showUnknownRun(io, turns, result.runId);
  if ("state" in chat) return chat.state === "aborted" ? out(io, "[run aborted]") : undefined;
  showAskedEnd(io, turns, result.runId, chat);
}

/** A typed line, and whether the gateway took it (its `chat.send` answered). */
interface TypedLine {
  message: string;
  sent: boolean;
}

/** A line the gateway never answered because it went away for good: said on stderr, exit 1. */
function gaveUp(io: CliIo, error: GatewayGoneError, message: string, sent: boolean): never {
  err(io, `${error.message}; ${sent ? "no answer came for" : "not sent"}: ${message}`);
  throw new CliExit(ExitCode.failure);
}

/** The chat itself: the session's events, and each typed line in turn, so output stays in order. */
async function chatIn(io: CliIo, client: ChatConnection, sessionKey: string): Promise<void> {
  // Only this session's events: replies, deliveries and run ends of other sessions stay out.
  await client.call("subscribe", { sessionKeys: [sessionKey] });
  const turns = newChatTurns();
  showEvents(io, client, sessionKey, turns);
  const lines = readline.createInterface({ input: io.stdin, terminal: false });
  client.onClose(() => lines.close()); // the chat gave up on the gateway: stop reading
  for await (const line of lines) {
    const message = line.trim();
    if (!message) continue;
    const typed: TypedLine = { message, sent: false };
    await sendLine(io, client, sessionKey, typed, turns).catch((error: Error) => {
      if (error instanceof GatewayGoneError) gaveUp(io, error, message, typed.sent);
      out(io, `[error: ${error.message}]`);
    });
  }
  if (client.gone) {
    err(io, client.gone.message);
    throw new CliExit(ExitCode.failure);
  }
}

/** `switchboard chat`: a terminal chat with the running gateway (channel webchat, acting as the owner). */
export function registerChatCommand(program: Command, io: CliIo): void {
  program
    .command("chat")
    .description("chat with an agent through the running gateway; /commands work here too; Ctrl-D ends")
    .option("--session <key>", "session to talk in", "main")
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .option("--give-up-after <seconds>", "how long to wait for a gateway that went away before leaving", "60")
    .action(async (flags: { session: string; url?: string; token?: string; giveUpAfter: string }, cmd: Command) => {
      let sessionKey = flags.session;
      // After a gateway restart: this session's events again (docs/reliability.md, the terminal chat).
      const resubscribe = (again: GatewayClient) => again.call("subscribe", { sessionKeys: [sessionKey] });
      const client = await connectChat(io, cmd.optsWithGlobals().config, flags, resubscribe);
      sessionKey = await showHistory(io, client, flags.session);
      await chatIn(io, client, sessionKey);
      await client.close();
    });
}
