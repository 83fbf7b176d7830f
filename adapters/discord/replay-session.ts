// Picks up what a previous holder of the account left: once the account's own session is READY
// (its live events held), RESUMEs the stored session on a short connection of its own (the replay
// connection), collects the messages Discord replays (everything after the stored sequence: those
// the previous holder had not stored, and those sent until the RESUME, which the new session also
// got; the inbox drops those by message id), then closes it. So no message falls between the two
// sessions. The close keeps the session resumable (not 1000/1001, which would end it): until this
// holder's own session is stored, after the replayed messages, a crash leaves the old one to the
// next holder, replayed again (the inbox drops what was already stored). discord.js's Client cannot
// resume a session it did not start (it needs the READY it would not get), hence this connection.
import WebSocket from "ws";
import type { Logger } from "../../src/index.js";
import type { StoredSession } from "./gateway-session.js";

/**
 * How a replay ended: "resumed" (everything replayed), "invalid" (Discord no longer knows the
 * session), or cut short: "reconnect" (op 7) and "resumable" (op 9 true) after their retries.
 */
type ReplayEnd = "resumed" | "invalid" | "resumable" | "reconnect" | "closed" | "timeout";

/** What {@link replayStoredSession} brings back. */
export interface Replayed {
  /** the MESSAGE_CREATE payloads replayed, in order */
  messages: unknown[];
  end: ReplayEnd;
}

/** How long a replay may take before the account goes on with what it got. */
const REPLAY_TIMEOUT_MS = 10_000;
/** How long the closing handshake may take before the socket is dropped. */
const CLOSE_TIMEOUT_MS = 1_000;

/** A close code that keeps the session resumable (what @discordjs/ws closes with to resume). */
const KEEP_SESSION = 4200;

/** A gateway frame as JSON, or undefined when it is not one (a replay never throws out of a socket listener). */
function parsePacket(data: WebSocket.RawData): { op: number; t?: string; s?: unknown; d?: unknown } | undefined {
  try {
    const packet = JSON.parse(String(data)) as { op?: unknown };
    return typeof packet === "object" && packet !== null && typeof packet.op === "number"
      ? (packet as { op: number; t?: string; s?: unknown; d?: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}

/** The replay connection, or undefined (logged) when `session.resumeUrl` is no URL `ws` can open. */
function connect(session: StoredSession, log: { logger: Logger; accountId: string }): WebSocket | undefined {
  try {
    return new WebSocket(`${session.resumeUrl.replace(/\/+$/, "")}/?v=10&encoding=json`);
  } catch (err) {
    log.logger.warn(
      { accountId: log.accountId, resumeUrl: session.resumeUrl, err: (err as Error).message },
      "discord session replay failed: the stored resume URL cannot be opened; nothing is replayed",
    );
    return undefined;
  }
}

/** How often a replay RESUMEs again when Discord asks it to: Reconnect (op 7), a resumable Invalid Session (op 9 true). */
const RETRIES: Partial<Record<ReplayEnd, number>> = { reconnect: 3, resumable: 1 };

/**
 * RESUMEs `session` with `token` and returns the messages replayed, once its connection is closed;
 * on Reconnect or a resumable Invalid Session it RESUMEs again after the last event it got, within
 * REPLAY_TIMEOUT_MS. Never throws.
 */
export async function replayStoredSession(
  session: StoredSession,
  token: string,
  log: { logger: Logger; accountId: string },
): Promise<Replayed> {
  const deadline = Date.now() + REPLAY_TIMEOUT_MS;
  const messages: unknown[] = [];
  const tries = new Map<ReplayEnd, number>();
  let seq = session.seq;
  for (;;) {
    const once = await resumeOnce({ ...session, seq }, token, log, deadline - Date.now());
    messages.push(...once.messages);
    seq = once.seq;
    const tried = (tries.get(once.end) ?? 0) + 1;
    tries.set(once.end, tried);
    if (tried > (RETRIES[once.end] ?? 0) || Date.now() >= deadline) {
      log.logger.info(
        { accountId: log.accountId, end: once.end, messages: messages.length },
        "discord session replayed",
      );
      if (once.end !== "resumed")
        log.logger.warn(
          { accountId: log.accountId, end: once.end, sessionId: session.sessionId },
          "discord session not fully replayed: messages sent while no gateway was connected may not be answered",
        );
      return { messages, end: once.end };
    }
    log.logger.info({ accountId: log.accountId, end: once.end, seq }, "discord session replay: resuming again");
  }
}

/** One RESUME of `session` on a connection of its own, with the last sequence it got. */
function resumeOnce(
  session: StoredSession,
  token: string,
  log: { logger: Logger; accountId: string },
  timeoutMs: number,
): Promise<Replayed & { seq: number }> {
  const socket = connect(session, log);
  if (!socket) return Promise.resolve({ messages: [], end: "closed", seq: session.seq });
  const ws: WebSocket = socket;
  return new Promise((resolve) => {
    const messages: unknown[] = [];
    let seq = session.seq;
    let end: ReplayEnd | undefined;
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    function finish(how: ReplayEnd) {
      end ??= how;
      clearTimeout(timer);
      // Resolved once the socket is closed, so a next RESUME never overlaps it.
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(KEEP_SESSION);
      setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS).unref();
    }
    ws.on("message", (data) => {
      const packet = parsePacket(data);
      if (!packet) return finish("closed");
      if (packet.op === 10)
        ws.send(JSON.stringify({ op: 6, d: { token, session_id: session.sessionId, seq: session.seq } }));
      if (packet.op === 0 && typeof packet.s === "number") seq = Math.max(seq, packet.s);
      if (packet.op === 0 && packet.t === "MESSAGE_CREATE") messages.push(packet.d);
      else if (packet.op === 0 && packet.t === "RESUMED") finish("resumed");
      else if (packet.op === 9) finish(packet.d === true ? "resumable" : "invalid");
      else if (packet.op === 7) finish("reconnect");
    });
    ws.on("error", (err) => {
      log.logger.warn({ accountId: log.accountId, err: err.message }, "discord session replay failed");
      finish("closed");
    });
    ws.on("close", () => {
      clearTimeout(timer);
      resolve({ messages, end: end ?? "closed", seq });
    });
  });
}
