// A relayed WebSocket whose reads the standby answers itself (./standby-reads.ts, docs/scale-out.md
// "Reads on a standby"): once the owner accepted the client's `connect` (its token check and
// lockout) and the token is also this gateway's own, a request for a read the standby serves is
// answered here from PostgreSQL and never reaches the owner; every other frame is relayed unchanged.
import { WebSocket } from "ws";
import type { Logger } from "../logger.js";
import { frameId } from "./dispatch-request.js";
import { MAX_FRAME_BYTES } from "./gateway-server.js";
import { pausesOf } from "./relay-flow.js";
import { tokenMatches } from "./request-guard.js";
import type { StandbyReads } from "./standby-front.js";

/** What a relayed socket's reads need: the reads, and the standby's own token. */
export interface RelayReadsDeps {
  reads: StandbyReads;
  /** this gateway's token (`gateway.auth.token`); undefined: none is set */
  token: string | undefined;
  logger: Logger;
}

/** Read requests are small: a larger frame is relayed, parsed only to keep the socket's order. */
const MAX_READ_FRAME = 64 * 1024;

/** A text frame's size in bytes. */
const sizeOf = (data: WebSocket.RawData): number =>
  Array.isArray(data) ? data.reduce((n, part) => n + part.length, 0) : (data as Buffer | ArrayBuffer).byteLength;

/** A text frame as a JSON object, or undefined (also past `limit` bytes). */
function parsed(
  data: WebSocket.RawData,
  isBinary: boolean,
  limit = MAX_READ_FRAME,
): Record<string, unknown> | undefined {
  if (isBinary || sizeOf(data) > limit) return undefined;
  const text = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
  try {
    const frame: unknown = JSON.parse(text.toString());
    return typeof frame === "object" && frame !== null && !Array.isArray(frame)
      ? (frame as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The token a `connect` frame presents, if any. */
function tokenOf(frame: Record<string, unknown>): string | undefined {
  const token = (frame.params as { auth?: { token?: unknown } } | undefined)?.auth?.token;
  return typeof token === "string" ? token : undefined;
}

/** Relayed frames whose order the owner must see: while one waits for its answer, a chat.send is relayed too. */
const ORDERED = new Set(["chat.send", "chat.abort"]);

/** Frames of one socket queued behind one being answered here: past this many, or these many bytes, the client is not read. */
const MAX_QUEUED = { frames: 256, bytes: 1024 * 1024 };

/** The frame queue's reason in the socket's pauses (./relay-flow.ts: backpressure has its own). */
const QUEUE_FULL = "frame-queue";

/**
 * One socket's frames, one after the other: `busy` while a frame is queued or being answered, so a
 * later frame, served or relayed, waits its turn (docs/scale-out.md "Limits": one socket's order).
 * The socket is not read while the queue is full, whoever else resumes it (its pauses are counted).
 */
function frameQueue(client: WebSocket, logger: Logger) {
  const pauses = pausesOf(client);
  let queued = 0;
  let bytes = 0;
  let tail: Promise<void> = Promise.resolve();
  return {
    busy: () => queued > 0,
    push(size: number, task: () => Promise<void> | void) {
      queued++;
      bytes += size;
      if (queued >= MAX_QUEUED.frames || bytes >= MAX_QUEUED.bytes) pauses.pause(QUEUE_FULL);
      tail = tail
        .then(task)
        .catch((err: unknown) => logger.warn({ err }, "relayed frame not handled"))
        .finally(() => {
          queued--;
          bytes -= size;
          if (queued === 0) pauses.resume(QUEUE_FULL);
        });
    },
  };
}

/** How a frame held back goes on to the owner: relay-flow's send (its bounds); alone, straight on the socket. */
type SendOn = (data: WebSocket.RawData, isBinary: boolean) => void;

/**
 * Watches one relayed socket's `connect` and the owner's answer to it; returns the filter of the
 * client's frames: false for a read answered here (its answer is sent to the client, or the frame
 * relayed after all when the standby cannot answer it, e.g. a run only the owner knows). One
 * socket's frames leave in the order they came: a frame waits for the earlier ones answered here;
 * a frame held back goes on through `sendOn`.
 */
export function relayReads(
  client: WebSocket,
  upstream: WebSocket,
  deps: RelayReadsDeps,
  sendOn: SendOn = (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  },
) {
  const owner = ownerAnswers(upstream, deps);
  const queue = frameQueue(client, deps.logger);
  const relay = (frame: Record<string, unknown> | undefined, data: WebSocket.RawData, isBinary: boolean) => {
    if (frame) owner.relayed(frame);
    sendOn(data, isBinary);
  };
  const serve = async (frame: Record<string, unknown>, data: WebSocket.RawData) => {
    // A relayed chat.send or chat.abort not answered yet: the owner orders this one after it.
    if (frame.method === "chat.send" && owner.waiting()) return relay(frame, data, false);
    const response = await deps.reads.answer(frame, owner.name() ?? "relayed").catch((err: unknown) => {
      deps.logger.warn({ err, method: frame.method }, "read not answered by the standby; relayed to the owner");
      return undefined;
    });
    if (!response)
      relay(frame, data, false); // a text frame, as it came
    else if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(response));
  };
  return (data: WebSocket.RawData, isBinary: boolean): boolean => {
    // Every text frame the gateway takes is parsed: a large chat.send the owner has not answered
    // orders the next ones too. Only a small one can be answered here.
    const frame = parsed(data, isBinary, MAX_FRAME_BYTES);
    if (frame && owner.name() === undefined) {
      owner.connecting(frame);
      return true;
    }
    const read = sizeOf(data) <= MAX_READ_FRAME ? frame : undefined;
    if (read && typeof read.method === "string" && deps.reads.serves(read.method)) {
      queue.push(sizeOf(data), () => serve(read, data));
      return false;
    }
    if (!queue.busy()) {
      if (frame) owner.relayed(frame);
      return true;
    }
    queue.push(sizeOf(data), () => relay(frame, data, isBinary));
    return false;
  };
}

/**
 * What the owner answered on a relayed socket: the client's name once it accepted the client's
 * `connect` with the standby's own token, and which relayed chat.send/chat.abort it has not answered.
 */
function ownerAnswers(upstream: WebSocket, deps: Pick<RelayReadsDeps, "token">) {
  let connect: { id: string; token: string | undefined } | undefined;
  let name: string | undefined; // the client's name as the owner's `connect` answer gives it
  let answered = false; // the owner answered the `connect`
  const waiting = new Set<string>(); // ids of relayed chat.send/chat.abort frames the owner has not answered
  upstream.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
    if ((answered || !connect) && waiting.size === 0) return;
    const frame = parsed(data, isBinary);
    if (frame?.type !== "res") return;
    waiting.delete(frameId(frame));
    if (answered || !connect || frameId(frame) !== connect.id) return;
    answered = true;
    const payload = frame.payload as { client?: unknown } | undefined;
    if (frame.ok === true && tokenMatches(deps.token, connect.token))
      name = typeof payload?.client === "string" ? payload.client : "relayed";
  });
  return {
    name: () => name,
    waiting: () => waiting.size > 0,
    connecting(frame: Record<string, unknown>) {
      if (!connect && frame.method === "connect") connect = { id: frameId(frame), token: tokenOf(frame) };
    },
    relayed(frame: Record<string, unknown>) {
      const id = frameId(frame);
      if (typeof frame.method === "string" && ORDERED.has(frame.method) && id !== "") waiting.add(id);
    },
  };
}
