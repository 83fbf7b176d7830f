// Flow control and liveness of one relayed WebSocket (./relay-socket.ts). A side that does not read
// (a slow client, a paused owner) must not make the standby buffer the other side's frames without
// limit: above a high-water mark the standby stops reading the sender, so the sender's own socket
// fills (TCP backpressure); a side still over it after `stallMs`, or past a hard cap, is closed.
// The owner is pinged, so a dead owner connection (no FIN, no RST) is noticed.
import { WebSocket } from "ws";
import type { RelayTiming } from "./standby-front.js";

/** Bounds of one relayed WebSocket's buffers, and how often the owner is pinged. */
export interface RelayFlow {
  /** bytes waiting toward one side above which the standby stops reading the other */
  highWaterBytes: number;
  /** bytes waiting below which it reads again */
  lowWaterBytes: number;
  /** bytes waiting toward one side that close the relay at once (a frame read before the pause took hold) */
  hardCapBytes: number;
  /** a side still over the high-water mark this long after reads were paused is closed */
  stallMs: number;
  /** the owner's side is pinged this often; no pong by the next ping ends it (the client gets 1012) */
  pingMs: number;
}

/** The close a client gets when it reads too slowly: the relay's memory bound is a policy (1008). */
export const CLIENT_TOO_SLOW = { code: 1008, reason: "the client reads too slowly; reconnect" } as const;

/** The close a client gets when the owner does not read what it sends: "try again later" (1013). */
export const OWNER_TOO_SLOW = { code: 1013, reason: "the schema's owner does not keep up; retry" } as const;

const BACKPRESSURE = "backpressure";

/** 1 MiB of frames buffered toward a side pauses the other; 8 MiB (above one 4 MiB frame) closes. */
export function relayFlow(timing: RelayTiming): RelayFlow {
  return {
    highWaterBytes: 1024 * 1024,
    lowWaterBytes: 256 * 1024,
    hardCapBytes: 8 * 1024 * 1024,
    stallMs: timing.leaseTtlMs,
    pingMs: timing.heartbeatMs,
  };
}

/** Why a socket is not read: each holder pauses it for its own reason; it is read again once none is left. */
export interface SocketPauses {
  pause(reason: string): void;
  resume(reason: string): void;
  holds(reason: string): boolean;
}

const pausesBySocket = new WeakMap<WebSocket, SocketPauses>();

/** The one owner of `ws`'s pause (backpressure here, the frame queue of ./relay-reads.ts): reasons counted. */
export function pausesOf(ws: WebSocket): SocketPauses {
  let pauses = pausesBySocket.get(ws);
  if (pauses) return pauses;
  const reasons = new Set<string>();
  pauses = {
    pause(reason) {
      reasons.add(reason);
      ws.pause();
    },
    resume(reason) {
      if (reasons.delete(reason) && reasons.size === 0) ws.resume();
    },
    holds: (reason) => reasons.has(reason),
  };
  pausesBySocket.set(ws, pauses);
  return pauses;
}

/** What {@link forwardFrames} returns: its stop, and its way to send a frame on (a frame held back, sent later). */
export interface Forwarding {
  stop(): void;
  send(data: WebSocket.RawData, isBinary: boolean): void;
}

/**
 * Sends every frame `from` receives on to `to`, reading `from` only while `to` has less than the
 * high-water mark waiting; `stalled` runs (once) when `to` stays over it for `stallMs` or passes the
 * hard cap; a frame `relays` says no to is not sent (its holder may `send` it later, through the
 * same bounds). Returns the stop that clears its timer, and that `send`.
 */
export function forwardFrames(
  from: WebSocket,
  to: WebSocket,
  flow: RelayFlow,
  stalled: () => void,
  /** false: a frame the standby answers itself (./relay-reads.ts), not sent on */
  relays: (data: WebSocket.RawData, isBinary: boolean) => boolean = () => true,
): Forwarding {
  const pauses = pausesOf(from);
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    stalled();
  };
  // Called as each frame leaves for the kernel: once the backlog is small, reading resumes.
  const written = () => {
    if (!pauses.holds(BACKPRESSURE) || to.bufferedAmount > flow.lowWaterBytes) return;
    clearTimeout(timer);
    pauses.resume(BACKPRESSURE);
  };
  const send = (data: WebSocket.RawData, isBinary: boolean) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, written);
    if (to.bufferedAmount > flow.hardCapBytes) return end();
    if (to.bufferedAmount <= flow.highWaterBytes || pauses.holds(BACKPRESSURE)) return;
    pauses.pause(BACKPRESSURE);
    timer = setTimeout(end, flow.stallMs);
  };
  from.on("message", (data, isBinary) => {
    if (to.readyState === WebSocket.OPEN && relays(data, isBinary)) send(data, isBinary);
  });
  const stop = () => {
    ended = true;
    clearTimeout(timer);
  };
  return { stop, send };
}

/**
 * Pings the owner's side every `pingMs`; a ping followed by nothing from the owner (no pong, no
 * frame: a pong can queue behind the frames it is still sending) by the next one terminates it (the
 * relay then closes the client 1012). While reading it is paused (backpressure) nothing can arrive,
 * and while frames toward the owner still wait to be written the ping waits behind them, so neither
 * wait counts. Returns a stop.
 */
export function watchOwner(upstream: WebSocket, pingMs: number, dead: () => void): () => void {
  let waiting = false;
  const alive = () => {
    waiting = false;
  };
  upstream.on("pong", alive);
  upstream.on("message", alive);
  const timer = setInterval(() => {
    if (upstream.readyState !== WebSocket.OPEN) return;
    // Not reading the owner (backpressure), or still writing to it (a ping queues behind those frames,
    // and an owner that does not read is the stall's case, 1013): no answer can be expected yet.
    if (upstream.isPaused || upstream.bufferedAmount > 0) {
      waiting = false;
      return;
    }
    if (waiting) {
      dead();
      return void upstream.terminate();
    }
    waiting = true;
    upstream.ping();
  }, pingMs);
  timer.unref();
  return () => clearInterval(timer);
}
