// A relayed WebSocket whose reads the standby answers itself (./standby-reads.ts, docs/scale-out.md
// "Reads on a standby"): once the owner accepted the client's `connect` (its token check and
// lockout) and the token is also this gateway's own, a request for a read the standby serves is
// answered here from PostgreSQL and never reaches the owner; every other frame is relayed unchanged.
import { WebSocket } from "ws";
import type { Logger } from "../logger.js";
import { frameId } from "./dispatch-request.js";
import { tokenMatches } from "./request-guard.js";
import type { StandbyReads } from "./standby-front.js";

/** What a relayed socket's reads need: the reads, and the standby's own token. */
export interface RelayReadsDeps {
  reads: StandbyReads;
  /** this gateway's token (`gateway.auth.token`); undefined: none is set */
  token: string | undefined;
  logger: Logger;
}

/** Read requests are small: a larger frame is relayed without being parsed. */
const MAX_READ_FRAME = 64 * 1024;

/** A text frame as a JSON object, or undefined. */
function parsed(data: WebSocket.RawData, isBinary: boolean): Record<string, unknown> | undefined {
  if (isBinary) return undefined;
  const text = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
  if (text.length > MAX_READ_FRAME) return undefined;
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

/**
 * Watches one relayed socket's `connect` and the owner's answer to it; returns the filter of the
 * client's frames: false for a read answered here (its answer is sent to the client, or the frame
 * relayed after all when the standby cannot answer it, e.g. a run only the owner knows).
 */
export function relayReads(client: WebSocket, upstream: WebSocket, deps: RelayReadsDeps) {
  let connect: { id: string; token: string | undefined } | undefined;
  let name: string | undefined; // the client's name as the owner's `connect` answer gives it
  const ownerFrame = (data: WebSocket.RawData, isBinary: boolean) => {
    if (!connect) return;
    const frame = parsed(data, isBinary);
    if (frame?.type !== "res" || frame.id !== connect.id) return;
    upstream.off("message", ownerFrame);
    const payload = frame.payload as { client?: unknown } | undefined;
    if (frame.ok === true && tokenMatches(deps.token, connect.token))
      name = typeof payload?.client === "string" ? payload.client : "relayed";
  };
  upstream.on("message", ownerFrame);
  const answer = async (frame: Record<string, unknown>, data: WebSocket.RawData) => {
    const response = await deps.reads.answer(frame, name ?? "relayed").catch((err: unknown) => {
      deps.logger.warn({ err, method: frame.method }, "read not answered by the standby; relayed to the owner");
      return undefined;
    });
    if (response) {
      if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(response));
    } else if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: false }); // a text frame, as it came
  };
  return (data: WebSocket.RawData, isBinary: boolean): boolean => {
    const frame = parsed(data, isBinary);
    if (!frame) return true;
    if (name === undefined) {
      if (!connect && frame.method === "connect") connect = { id: frameId(frame), token: tokenOf(frame) };
      return true;
    }
    if (typeof frame.method !== "string" || !deps.reads.serves(frame.method)) return true;
    void answer(frame, data);
    return false;
  };
}
