// The gateway half of the fake Discord (./fake-discord-server.ts), on the REST server's port: HELLO,
// IDENTIFY -> a new session (READY + GUILD_CREATE), heartbeat ACKs, close 4004 for a bad token and
// 4014 for a refused intent, and RESUME as Discord does it: every session keeps its events, a
// connection that dropped without a 1000/1001 close leaves its session resumable (events dispatched
// meanwhile are kept), and a RESUME (op 6: session_id + seq) replays the events after `seq`, then
// RESUMED. An IDENTIFY of a bot while another connection of it is open is counted as a second
// connection (two gateways connected as the bot); a RESUME is not (a holder's replay connection
// RESUMEs the previous holder's session while its own is live). `onStep` lets a test dispatch at a
// step of the handover.
// A session left without a connection expires after `sessionTtlMs` (default 60 s; Discord documents
// no duration) on the fake's `now` clock: its RESUME then gets op 9 d: false, as one closed with
// 1000/1001 does. `failNextConnections` refuses (HTTP 503) or resets (before HELLO) the next connections.
// Unlike Discord: it sends op 7 (Reconnect) and op 9 with d: true only when told
// (`interruptNextResume`), never a 4007/4009 close on a RESUME; a RESUME with `seq` below 2 replays READY and GUILD_CREATE (Discord never replays READY);
// a RESUME of a session whose connection is still open gets op 9 (Discord does not document that
// case).
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";

/** A bot as the gateway knows it. */
interface GatewayBot {
  token: string;
  user: { id: string; username: string };
  applicationId: string;
}

/** One gateway session: its events (for a replay) and the connection it is on, if any. */
interface FakeSession {
  id: string;
  bot: GatewayBot;
  seq: number;
  events: Array<{ t: string; s: number; d: unknown }>;
  ws?: WebSocket;
  /** when its connection dropped (it expires `sessionTtlMs` later) */
  droppedAt?: number;
}

/** A step of a connection: opened (before HELLO), READY sent (identify), replay sent before RESUMED (resume). */
export type FakeGatewayStep = "connect" | "identify" | "resume";

/** A connection that started a session (IDENTIFY) or resumed one (RESUME), and when. */
interface FakeLogin {
  kind: "identify" | "resume";
  sessionId: string;
  at: number;
  /** events replayed (a resume) */
  replayed: number;
}

const MESSAGE_CONTENT_INTENT = 1 << 15;
/** A client's close with these ends its session (Discord: "your session will be invalidated"). */
const ENDS_SESSION = new Set([1000, 1001]);

/** Serves the gateway on `server`; `guildCreate(bot)` is the GUILD_CREATE a new session gets. */
export function serveFakeGateway(
  server: http.Server,
  options: {
    bots: GatewayBot[];
    refuseMessageContent?: boolean;
    guildId: string;
    guildCreate: (bot: GatewayBot) => unknown;
    /** how long a session without a connection stays resumable (default 60 s) */
    sessionTtlMs?: number;
    /** the clock sessions expire by (default Date.now) */
    now?: () => number;
  },
) {
  const now = options.now ?? Date.now;
  const sessionTtlMs = options.sessionTtlMs ?? 60_000;
  const failing: Array<"refuse" | "reset"> = [];
  const sockets = new Map<WebSocket, FakeSession | undefined>();
  const sessions = new Map<string, FakeSession>();
  const logins: FakeLogin[] = [];
  const closeCodes: number[] = [];
  let secondConnections = 0;
  const steps: Array<(step: FakeGatewayStep) => void> = [];
  const interrupts: Array<"reconnect" | "resumable"> = [];
  const step = (name: FakeGatewayStep) => {
    for (const listener of steps) listener(name);
  };
  let nextSession = 1;
  const wss = new WebSocketServer({
    server,
    verifyClient: (_info, accept) => {
      if (failing[0] !== "refuse") return accept(true);
      failing.shift();
      accept(false, 503);
    },
  });
  /** The session `id`, unless it is gone or expired (then forgotten). */
  const live = (id: string) => {
    const session = sessions.get(id);
    if (session?.droppedAt !== undefined && now() - session.droppedAt > sessionTtlMs) sessions.delete(id);
    return sessions.get(id);
  };
  const send = (ws: WebSocket, packet: object) => ws.send(JSON.stringify(packet));
  const record = (session: FakeSession, t: string, d: unknown) => {
    const event = { t, s: ++session.seq, d };
    session.events.push(event);
    if (session.ws?.readyState === WebSocket.OPEN) send(session.ws, { op: 0, ...event });
  };
  /** Counts a connection of `bot` taken while another of its connections is open. */
  const countSecond = (ws: WebSocket, bot: GatewayBot) => {
    const others = [...sockets].filter(([o, s]) => o !== ws && s?.bot === bot && o.readyState === WebSocket.OPEN);
    if (others.length > 0) secondConnections++;
  };

  function identify(ws: WebSocket, d: { token?: string; intents?: number } | undefined) {
    const bot = options.bots.find((b) => b.token === d?.token);
    if (!bot) return ws.close(4004, "Authentication failed.");
    if (options.refuseMessageContent && ((d?.intents ?? 0) & MESSAGE_CONTENT_INTENT) !== 0)
      return ws.close(4014, "Disallowed intent(s).");
    countSecond(ws, bot);
    const session: FakeSession = { id: `session-${bot.user.id}-${nextSession++}`, bot, seq: 0, events: [], ws };
    sessions.set(session.id, session);
    sockets.set(ws, session);
    logins.push({ kind: "identify", sessionId: session.id, at: Date.now(), replayed: 0 });
    const { port } = server.address() as AddressInfo;
    record(session, "READY", {
      v: 10,
      user: { ...bot.user, discriminator: "0", global_name: null, avatar: null, bot: true },
      guilds: [{ id: options.guildId, unavailable: true }],
      session_id: session.id,
      resume_gateway_url: `ws://127.0.0.1:${port}`,
      shard: [0, 1],
      application: { id: bot.applicationId, flags: 0 },
    });
    record(session, "GUILD_CREATE", options.guildCreate(bot));
    step("identify");
  }

  function resume(ws: WebSocket, d: { token?: string; session_id?: string; seq?: number } | undefined) {
    const interrupt = interrupts.shift();
    if (interrupt === "resumable") return send(ws, { op: 9, s: null, t: null, d: true });
    const session = live(String(d?.session_id));
    if (!session || session.bot.token !== d?.token || session.ws?.readyState === WebSocket.OPEN)
      return send(ws, { op: 9, s: null, t: null, d: false });
    session.ws = ws;
    session.droppedAt = undefined;
    sockets.set(ws, session);
    const missed = session.events.filter((e) => e.s > Number(d.seq ?? 0));
    // Cut short: the first half replayed, then Reconnect (the session stays resumable).
    const replayed = interrupt === "reconnect" ? missed.slice(0, Math.ceil(missed.length / 2)) : missed;
    logins.push({ kind: "resume", sessionId: session.id, at: Date.now(), replayed: replayed.length });
    for (const event of replayed) send(ws, { op: 0, ...event });
    if (interrupt === "reconnect") {
      session.ws = undefined;
      return send(ws, { op: 7, s: null, t: null, d: null });
    }
    step("resume");
    record(session, "RESUMED", null);
  }

  wss.on("connection", (ws) => {
    if (failing[0] === "reset") {
      failing.shift();
      return ws.terminate();
    }
    sockets.set(ws, undefined);
    step("connect");
    ws.on("close", (code) => {
      const session = sockets.get(ws);
      if (session) closeCodes.push(code);
      sockets.delete(ws);
      if (session?.ws === ws) {
        session.ws = undefined;
        session.droppedAt = now();
      }
      if (session && ENDS_SESSION.has(code)) sessions.delete(session.id);
    });
    send(ws, { op: 10, s: null, t: null, d: { heartbeat_interval: 45_000 } });
    ws.on("message", (data) => {
      const packet = JSON.parse(String(data)) as { op: number; d?: Record<string, never> };
      if (packet.op === 1) return send(ws, { op: 11, s: null, t: null, d: null });
      if (packet.op === 6) return resume(ws, packet.d);
      if (packet.op === 2) identify(ws, packet.d);
    });
  });

  return {
    /** Sends a gateway event to every session of `bot`: on its connection, or kept for a resume. */
    dispatch(t: string, d: unknown, bot: GatewayBot): void {
      for (const session of sessions.values()) if (session.bot === bot) record(session, t, d);
    },
    /** open gateway connections (identified or not) */
    connections: () => sockets.size,
    /** every IDENTIFY and RESUME the gateway accepted, in order */
    logins,
    /** IDENTIFYs of a bot accepted while another of its connections was open (Discord would run both) */
    secondConnections: () => secondConnections,
    /** the close code of every connection that had a session, as the client closed it (1006: dropped) */
    closeCodes: () => [...closeCodes],
    /** Drops every open connection without a close (a network cut): the client reconnects and RESUMEs. */
    dropConnections: () => {
      for (const ws of sockets.keys()) ws.terminate();
    },
    /** Calls `listener` at each step of every connection, synchronously (a dispatch lands at that point). */
    onStep: (listener: (step: FakeGatewayStep) => void) => void steps.push(listener),
    /** The next RESUME is cut short with Reconnect (op 7) after half its events, or refused with op 9 `d: true`. */
    interruptNextResume: (how: "reconnect" | "resumable") => void interrupts.push(how),
    /** The next `count` connections are refused (HTTP 503 at the upgrade) or reset (closed before HELLO). */
    failNextConnections: (count: number, how: "refuse" | "reset") => void failing.push(...Array(count).fill(how)),
    async close() {
      for (const ws of sockets.keys()) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** A bare gateway client of a test (a holder that dies, a second connection): connected, identified, READY. */
export async function identifyRaw(apiRoot: string, token: string) {
  const ws = new WebSocket(`${apiRoot.replace(/^http/, "ws").replace(/\/api$/, "")}/?v=10&encoding=json`);
  const events: Array<{ t: string; s: number; d: unknown }> = [];
  const ready = await new Promise<{ session_id: string; resume_gateway_url: string }>((resolve) => {
    ws.on("message", (data) => {
      const packet = JSON.parse(String(data)) as { op: number; t: string; s: number; d: never };
      if (packet.op === 10) ws.send(JSON.stringify({ op: 2, d: { token, intents: 0 } }));
      if (packet.op === 0) events.push(packet);
      if (packet.t === "READY") resolve(packet.d);
    });
  });
  return { ws, events, sessionId: ready.session_id, resumeUrl: ready.resume_gateway_url };
}
