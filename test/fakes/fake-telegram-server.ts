// A fake Telegram Bot API on 127.0.0.1 for the real grammy client: getMe, deleteWebhook, setWebhook,
// getUpdates (long poll honouring offset and timeout; a second poll of a bot while one is open is
// refused with 409 and counted, as two bot instances are), setMyCommands, sendMessage (parsing HTML
// and enforcing 4096 visible characters and the General-topic rule like Telegram), sendChatAction,
// and scripted failures (429, any error, a dropped connection).
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Update, UserFromGetMe } from "grammy/types";
import { parseTelegramHtml } from "./telegram-html.js";
import { createUpdateQueues } from "./telegram-updates.js";

/** A text DM from Ada (user and chat 111, the process scripts' allowed owner; or another `chat`), as an update to push. */
export const adaDm = (text: string, id: number, chat = 111) =>
  ({
    message: {
      message_id: id,
      date: 1767225600,
      chat: { id: chat, type: "private", first_name: "Ada" },
      from: { id: chat, is_bot: false, first_name: "Ada" },
      text,
    },
  }) as unknown as Omit<Update, "update_id">;

/** A bot the fake knows: its token and what getMe answers. */
export interface FakeBot {
  token: string;
  info: UserFromGetMe;
}

/** The default bot: token `123456:TEST`, `@SwitchboardTestBot`. */
export const TEST_BOT: FakeBot = {
  token: "123456:TEST",
  info: {
    id: 123456,
    is_bot: true,
    first_name: "Switchboard",
    username: "SwitchboardTestBot",
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  },
};

/** One API call as the fake received it. */
interface FakeCall {
  token: string;
  method: string;
  body: Record<string, unknown>;
  at: number;
}

/** A message the fake accepted: `text` is what a user sees (tags parsed, entities decoded). */
interface FakeSent {
  token: string;
  chatId: string;
  threadId?: number;
  text: string;
  parseMode?: string;
  replyTo?: number;
  messageId: number;
  /** when the fake accepted it (Date.now()) */
  at: number;
}

/** A scripted failure: a Bot API error body, or a dropped connection. */
export type FakeFailure =
  | { error_code: number; description: string; parameters?: Record<string, unknown> }
  | "disconnect";

/** The running fake. */
export interface FakeTelegramServer {
  /** pass as `apiRoot` */
  apiRoot: string;
  calls: FakeCall[];
  sent: FakeSent[];
  callsTo(method: string): FakeCall[];
  /** Queues an update for a bot (default the first); returns its update_id (ascending). */
  push(update: Omit<Update, "update_id">, token?: string): number;
  /** Makes the next `count` calls of `method` fail. */
  failNext(method: string, failure: FakeFailure, count?: number): void;
  /** Resolves once `method` has been called `count` times in all. */
  waitFor(method: string, count?: number): Promise<void>;
  /** Resolves once the client confirmed (by a getUpdates offset past it) every update pushed so far to a bot (default the first). */
  flush(token?: string): Promise<void>;
  /** getUpdates calls refused with 409 because another poll of the same bot was open (two pollers at once) */
  conflicts(token?: string): number;
  /** TCP connections from clients that are open now (a stopped client leaves none) */
  openConnections(): number;
  /** An outage: the port refuses every connection for `ms`, then listens again; settles when it is back. */
  goDown(ms: number): Promise<void>;
  /** Fails every call of `method` with `failure` for `ms` or until `ms` settles (a 502 front, say); settles when that is over. */
  failFor(method: string, failure: FakeFailure, ms: number | Promise<unknown>): Promise<void>;
  close(): Promise<void>;
}

type Body = Record<string, unknown>;
const error = (error_code: number, description: string, parameters?: Body) => ({
  ok: false,
  error_code,
  description,
  ...(parameters && { parameters }),
});

/**
 * Starts the fake on an ephemeral port. An idle getUpdates is held at most `maxHoldMs` (default
 * 150) or its `timeout`, and answered at once when an update is pushed. With `forgetConfirmed`
 * false, updates stay after a later offset confirmed them (a crash before Telegram heard of it).
 * With `sendDelayMs`, a sendMessage is accepted (shown to the user) at once and answered that much
 * later: the window in which a client that dies never learns its message arrived.
 */
export async function startFakeTelegramServer(
  options: { bots?: FakeBot[]; maxHoldMs?: number; forgetConfirmed?: boolean; sendDelayMs?: number } = {},
): Promise<FakeTelegramServer> {
  const bots = options.bots ?? [TEST_BOT];
  const queues = createUpdateQueues(
    bots.map((bot) => bot.token),
    options,
  );
  const failures = new Map<string, FakeFailure[]>();
  const failing = new Map<string, FakeFailure>();
  const calls: FakeCall[] = [];
  const sent: FakeSent[] = [];
  const waiters = new Set<() => void>();
  let nextMessageId = 1000;

  function sendMessage(token: string, body: Body) {
    const threadId = body.message_thread_id as number | undefined;
    if (threadId === 1) return error(400, "Bad Request: message thread not found");
    const parsed =
      body.parse_mode === "HTML" ? parseTelegramHtml(String(body.text)) : { text: String(body.text ?? "") };
    if ("error" in parsed) return error(400, `Bad Request: can't parse entities: ${parsed.error}`);
    if (!parsed.text.trim()) return error(400, "Bad Request: message text is empty");
    if (parsed.text.length > 4096) return error(400, "Bad Request: message is too long");
    const chatId = String(body.chat_id);
    const replyTo = (body.reply_parameters as { message_id?: number } | undefined)?.message_id;
    const message: FakeSent = {
      token,
      chatId,
      text: parsed.text,
      messageId: nextMessageId++,
      at: Date.now(),
      ...(threadId !== undefined && { threadId }),
      ...(typeof body.parse_mode === "string" && { parseMode: body.parse_mode }),
      ...(replyTo !== undefined && { replyTo }),
    };
    sent.push(message);
    const chat = { id: Number(chatId), type: Number(chatId) > 0 ? "private" : "supergroup" };
    const bot = bots.find((b) => b.token === token)!.info;
    return {
      ok: true,
      result: {
        message_id: message.messageId,
        date: Math.floor(Date.now() / 1000),
        chat,
        from: bot,
        text: parsed.text,
        ...(threadId !== undefined && { message_thread_id: threadId, is_topic_message: true }),
      },
    };
  }

  async function answer(token: string, method: string, body: Body, res: http.ServerResponse): Promise<unknown> {
    switch (method) {
      case "getMe":
        return { ok: true, result: bots.find((b) => b.token === token)!.info };
      case "deleteWebhook":
      case "setWebhook":
      case "setMyCommands":
      case "sendChatAction":
        return { ok: true, result: true };
      case "getUpdates":
        return queues.getUpdates(token, body, res);
      case "sendMessage":
        return sendMessage(token, body);
      default:
        return error(404, "Not Found");
    }
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const [, token = "", method = ""] = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? "") ?? [];
    const raw = Buffer.concat(chunks).toString("utf8");
    const body = (raw ? JSON.parse(raw) : {}) as Body;
    const reply = (payload: unknown) => {
      const status = (payload as { error_code?: number }).error_code ?? 200;
      if (!res.destroyed) res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
    };
    if (!bots.some((bot) => bot.token === token)) return reply(error(401, "Unauthorized"));
    calls.push({ token, method, body, at: Date.now() });
    for (const wake of waiters) wake();
    const failure = failing.get(method) ?? failures.get(method)?.shift();
    if (failure === "disconnect") return void req.socket.destroy();
    if (failure) return reply(error(failure.error_code, failure.description, failure.parameters));
    const payload = await answer(token, method, body, res);
    if (method === "sendMessage" && options.sendDelayMs)
      await new Promise((resolve) => setTimeout(resolve, options.sendDelayMs));
    reply(payload);
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  /** Resolves once `count` calls matching `match` came in. */
  const calledWhen = (match: (call: FakeCall) => boolean, count = 1) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (calls.filter(match).length < count) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    sent,
    callsTo: (method) => calls.filter((c) => c.method === method),
    push: (update, token = bots[0]!.token) => queues.push(token, update),
    failNext(method, failure, count = 1) {
      failures.set(method, [...(failures.get(method) ?? []), ...Array<FakeFailure>(count).fill(failure)]);
    },
    waitFor(method, count = 1) {
      return calledWhen((c) => c.method === method, count);
    },
    flush(token = bots[0]!.token) {
      const last = queues.lastId(token);
      return calledWhen((c) => c.token === token && c.method === "getUpdates" && Number(c.body.offset ?? 0) > last);
    },
    conflicts: queues.conflicts,
    openConnections: () => sockets.size,
    async goDown(ms) {
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, ms));
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async failFor(method, failure, ms) {
      failing.set(method, failure);
      await (typeof ms === "number" ? new Promise((resolve) => setTimeout(resolve, ms)) : ms);
      failing.delete(method);
    },
    async close() {
      queues.wakeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
