import readline from "node:readline";
import type { Command } from "commander";
import { type CliIo, out } from "./cli-io.js";
import { connectCli } from "./connect-cli.js";
import type { GatewayClient } from "./gateway-client.js";

interface ChatEvent {
  sessionKey: string;
  runId: string;
  state: "final" | "error" | "aborted";
  text?: string;
  error?: string;
}

interface HistoryMessage {
  role: string;
  content: unknown;
}

function textOf(message: HistoryMessage): string {
  if (typeof message.content === "string") return message.content;
  return (message.content as Array<{ type: string; text?: string }>).filter((b) => b.type === "text").map((b) => b.text).join("");
}

async function showHistory(io: CliIo, client: GatewayClient, sessionKey: string): Promise<string> {
  const history = await client.call<{ sessionKey: string; messages: HistoryMessage[] }>("chat.history", { sessionKey, limit: 6 });
  for (const message of history.messages) out(io, `${message.role === "user" ? "you" : "agent"}: ${textOf(message)}`);
  return history.sessionKey;
}

/** `switchboard chat`: a terminal chat with the running gateway (channel webchat, acting as the owner). */
export function registerChatCommand(program: Command, io: CliIo): void {
  program
    .command("chat")
    .description("chat with an agent through the running gateway; /commands work here too; Ctrl-D ends")
    .option("--session <key>", "session to talk in", "main")
    .option("--url <url>", "gateway URL (default ws://127.0.0.1:<gateway.port>)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(async (flags: { session: string; url?: string; token?: string }, cmd: Command) => {
      const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
      const sessionKey = await showHistory(io, client, flags.session);
      out(io, `-- ${sessionKey} (Ctrl-D to leave)`);
      const waiting = new Map<string, () => void>();
      client.onEvent((event, payload) => {
        const chat = payload as ChatEvent;
        if (event !== "chat" || chat.sessionKey !== sessionKey) return;
        if (chat.state === "final") {
          if (chat.text) out(io, `agent: ${chat.text}`);
        } else out(io, `[run ${chat.state}${chat.error && chat.error !== chat.state ? `: ${chat.error}` : ""}]`);
        waiting.get(chat.runId)?.();
        waiting.delete(chat.runId);
      });
      const lines = readline.createInterface({ input: io.stdin, terminal: false });
      // Lines are handled one at a time, each waiting for its reply, so output stays in order.
      for await (const line of lines) {
        const message = line.trim();
        if (!message) continue;
        try {
          const result = await client.call<{ runId: string; status: string; reply?: string }>("chat.send", { sessionKey, message });
          if (result.status === "command") {
            if (result.reply) out(io, `agent: ${result.reply}`);
            continue;
          }
          if (result.status === "started") await new Promise<void>((resolve) => waiting.set(result.runId, resolve));
        } catch (error) {
          out(io, `[error: ${(error as Error).message}]`);
        }
      }
      await client.close();
    });
}
