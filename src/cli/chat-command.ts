import { randomUUID } from "node:crypto";
import readline from "node:readline";
import type { Command } from "commander";
import { type CliIo, CliExit, ExitCode, err, out } from "./cli-io.js";
import { GatewayGoneError, connectChat, runEnd } from "./chat-connection.js";
import type { GatewayClient } from "./gateway-client.js";

interface ChatEvent {
  sessionKey: string;
  runId: string;
  state: "final" | "error" | "aborted" | "command";
  text?: string;
  error?: string;
  /** a chat command (role user) or its reply (role assistant), from any client of the session */
  command?: true;
  role?: "user" | "assistant";
}

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
      // Only this session's events: replies, deliveries and run ends of other sessions stay out.
      await client.call("subscribe", { sessionKeys: [sessionKey] });
      // Runs this terminal started, and how each ended (events can arrive before the send's result).
      const ended = new Map<string, ChatEvent>();
      // Commands this terminal sent: their replies come back as the send's result.
      const sentCommands = new Set<string>();
      const waiting = new Map<string, (event: ChatEvent) => void>();
      const show = (chat: ChatEvent) => {
        if (chat.state === "final") {
          if (chat.text) out(io, `agent: ${chat.text}`);
        } else out(io, `[run ${chat.state}${chat.error && chat.error !== chat.state ? `: ${chat.error}` : ""}]`);
      };
      client.onEvent((event, payload) => {
        const delivered = payload as { sessionKey: string; text: string };
        if (event === "chat.delivery" && delivered.sessionKey === sessionKey)
          return out(io, `agent: ${delivered.text}`);
        const chat = payload as ChatEvent;
        if (event !== "chat" || chat.sessionKey !== sessionKey) return;
        if (chat.command) {
          if (!sentCommands.has(chat.runId)) out(io, `${chat.role === "user" ? "you" : "agent"}: ${chat.text ?? ""}`);
          return;
        }
        const resolve = waiting.get(chat.runId);
        if (resolve) resolve(chat);
        else ended.set(chat.runId, chat);
      });
      const lines = readline.createInterface({ input: io.stdin, terminal: false });
      client.onClose(() => lines.close()); // the chat gave up on the gateway: stop reading
      // Lines are handled one at a time, each waiting for its reply, so output stays in order.
      for await (const line of lines) {
        const message = line.trim();
        if (!message) continue;
        let sent = false;
        try {
          const idempotencyKey = randomUUID();
          sentCommands.add(idempotencyKey);
          const result = await client.call<{ runId: string; status: string; reply?: string }>("chat.send", {
            sessionKey,
            message,
            idempotencyKey,
          });
          sent = true;
          if (result.status !== "command") sentCommands.delete(idempotencyKey);
          if (result.status === "command") {
            if (result.reply) out(io, `agent: ${result.reply}`);
            continue;
          }
          if (result.status !== "started" && result.status !== "duplicate") continue;
          const chat =
            ended.get(result.runId) ??
            (await runEnd(
              client,
              result.runId,
              new Promise<ChatEvent>((resolve) => waiting.set(result.runId, resolve)),
              result.status === "duplicate", // sent again after a reconnect: the gateway had it already
            ));
          waiting.delete(result.runId);
          ended.delete(result.runId);
          if (!chat) out(io, "[the gateway restarted during this turn and does not know it any more]");
          else
            show("state" in chat ? chat : { ...chat, sessionKey, runId: result.runId, state: runState(chat.status) });
        } catch (error) {
          if (!(error instanceof GatewayGoneError)) out(io, `[error: ${(error as Error).message}]`);
          else {
            err(io, `${error.message}; ${sent ? "no answer came for" : "not sent"}: ${message}`);
            throw new CliExit(ExitCode.failure);
          }
        }
      }
      if (client.gone) {
        err(io, client.gone.message);
        throw new CliExit(ExitCode.failure);
      }
      await client.close();
    });
}

/** A run's end as `agent.wait` names it, as the chat shows it. */
const runState = (status: string): ChatEvent["state"] =>
  status === "ok" ? "final" : status === "aborted" ? "aborted" : "error";
