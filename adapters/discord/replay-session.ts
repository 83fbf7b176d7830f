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
import { KEEP_SESSION, type StoredSession } from "./gateway-session.js";

/**
 * How a replay ended: "resumed" (everything replayed), "invalid" (Discord no longer knows the
 * session: ended, or expired), or cut short: "reconnect" (op 7), "resumable" (op 9 true) and
 * "dropped" (the connection failed to open, or broke before RESUMED) after their retries, "closed"
 * (Discord closed it with a code of its own, or the URL cannot be opened), "timeout".
 */
type ReplayEnd = "resumed" | "invalid" | "resumable" | "reconnect" | "dropped" | "closed" | "timeout";

/** What {@link replayStoredSession} brings back. */
export interface Replayed {
  /** the MESSAGE_CREATE payloads replayed, in order */
  messages: unknown[];
  end: ReplayEnd;
}

/** How a replay is bounded: the account's live messages wait for it. */
interface ReplayLimits {
  /** the whole replay, its retries and their waits included */
  timeoutMs: number;
  /** the wait before each new try of a connection that failed to open or broke before RESUMED */
  retryDelaysMs: readonly number[];
}

/**
 * 10 s in all (live messages wait at most that, plus CLOSE_TIMEOUT_MS for the last close); a
 * dropped connection is tried 4 times, 0.25, 0.5 and 1 s apart (a restarting proxy, a reset).
 */
const LIMITS: ReplayLimits = { timeoutMs: 10_000, retryDelaysMs: [250, 500, 1_000] };
/** How long the closing handshake may take before the socket is dropped. */
const CLOSE_TIMEOUT_MS = 1_000;

/** The clock a replay's bound, retry waits and close wait run on; injected so tests advance it instead of waiting. */
export interface ReplayClock {
  now(): number;
  timers: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
}

const NODE_CLOCK: ReplayClock = {
  now: Date.now,
  timers: {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  },
};

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

/** The wait before the `tried`+1-th try after `end`, or undefined when there is none. */
function nextTry(end: ReplayEnd, tried: number): number | undefined {
  if (end === "dropped") return LIMITS.retryDelaysMs[tried - 1];
  return tried <= (RETRIES[end] ?? 0) ? 0 : undefined;
}

/**
 * RESUMEs `session` with `token` and returns the messages replayed, once its connection is closed;
 * on Reconnect, a resumable Invalid Session or a dropped connection it RESUMEs again after the last
 * event it got, within LIMITS.timeoutMs on `clock`. Never throws.
 */
export async function replayStoredSession(
  session: StoredSession,
  token: string,
  log: { logger: Logger; accountId: string },
  clock: ReplayClock = NODE_CLOCK,
): Promise<Replayed> {
  const deadline = clock.now() + LIMITS.timeoutMs;
  const messages: unknown[] = [];
  const tries = new Map<ReplayEnd, number>();
  let seq = session.seq;
  for (;;) {
    const once = await resumeOnce({ ...session, seq }, token, log, { clock, timeoutMs: deadline - clock.now() });
    messages.push(...once.messages);
    seq = once.seq;
    const tried = (tries.get(once.end) ?? 0) + 1;
    tries.set(once.end, tried);
    const wait = nextTry(once.end, tried);
    if (wait === undefined || clock.now() + wait >= deadline)
      return reported({ messages, end: once.end }, session, log);
    log.logger.info(
      { accountId: log.accountId, end: once.end, seq, waitMs: wait },
      "discord session replay: resuming again",
    );
    if (wait > 0) await new Promise((resolve) => clock.timers.setTimeout(() => resolve(undefined), wait));
  }
}

/** Logs how the replay ended; one warning when messages of the gap may be missing. */
function reported(replayed: Replayed, session: StoredSession, log: { logger: Logger; accountId: string }): Replayed {
  const { end, messages } = replayed;
  const fields = { accountId: log.accountId, end, sessionId: session.sessionId };
  log.logger.info({ ...fields, messages: messages.length }, "discord session replayed");
  if (end === "invalid")
    log.logger.warn(
      fields,
      "discord session not resumable (Discord ended it, or it expired): messages sent while no gateway was connected could not be replayed; the account goes on with its own session",
    );
  else if (end !== "resumed")
    log.logger.warn(
      fields,
      "discord session not fully replayed: messages sent while no gateway was connected may not be answered",
    );
  return replayed;
}

/** One RESUME of `session` on a connection of its own, given up after `timeoutMs`, with the last sequence it got. */
function resumeOnce(
  session: StoredSession,
  token: string,
  log: { logger: Logger; accountId: string },
  { clock, timeoutMs }: { clock: ReplayClock; timeoutMs: number },
): Promise<Replayed & { seq: number }> {
  const socket = connect(session, log);
  if (!socket) return Promise.resolve({ messages: [], end: "closed", seq: session.seq });
  const ws: WebSocket = socket;
  return new Promise((resolve) => {
    const messages: unknown[] = [];
    let seq = session.seq;
    let end: ReplayEnd | undefined;
    const { timers } = clock;
    const timer = timers.setTimeout(() => finish("timeout"), timeoutMs);
    let closeTimer: unknown;
    function finish(how: ReplayEnd) {
      end ??= how;
      timers.clearTimeout(timer);
      // Resolved once the socket is closed, so a next RESUME never overlaps it.
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(KEEP_SESSION);
      closeTimer ??= timers.setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS);
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
      log.logger.info({ accountId: log.accountId, err: err.message }, "discord session replay connection failed");
      finish("dropped");
    });
    // A close of Discord's own (4000-4999) is its answer; any other before RESUMED is the network's.
    ws.on("close", (code) => {
      timers.clearTimeout(timer);
      if (closeTimer !== undefined) timers.clearTimeout(closeTimer);
      resolve({ messages, end: end ?? (code >= 4000 ? "closed" : "dropped"), seq });
    });
  });
}
