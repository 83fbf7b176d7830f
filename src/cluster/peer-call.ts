// The peer call (docs/scale-out.md "The peer call"): one gateway asks another gateway's core to do
// something, by name. An HTTP POST to the member's advertised address, path `/cluster/call`,
// authenticated by a key derived from the schema's relay secret (./peer-key.ts); the receiver answers from its own core
// (src/gateway/peer-route.ts). The HTTP status says whether the call reached a handler (200), the
// body how the handler answered.
import http from "node:http";
import { ERROR_CATALOGUE, type ErrorCode, SwitchboardError } from "../errors.js";
import { PEER_KEY_HEADER, peerKey } from "./peer-key.js";

/** The route a gateway serves peer calls on. */
export const PEER_CALL_PATH = "/cluster/call";

/** The gateway a peer call goes to: its node id and where it listens. */
export interface PeerTarget {
  nodeId: string;
  /** "host:port" */
  address: string;
}

/** Rejects with a SwitchboardError: the remote one's code and message, or UNAVAILABLE when the peer could not be reached or answered 503. */
export type PeerCall = (target: PeerTarget, name: string, params: unknown) => Promise<unknown>;

/** How long a call waits for its answer by default. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The peer ran nothing: it could not be reached, is not `to` (503), serves no handler of that name
 * (404) or refused the secret. Safe to send again (to the address read again).
 */
export class PeerRefusedError extends SwitchboardError {
  constructor(code: ErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.name = "PeerRefusedError";
  }
}

/** The answer as it came: HTTP status and body text. */
interface RawAnswer {
  status: number;
  body: string;
}

const isCode = (code: unknown): code is ErrorCode => typeof code === "string" && Object.hasOwn(ERROR_CATALOGUE, code);

/** The error an answer's body carries, when it carries one. */
function bodyError(body: string): { code: ErrorCode; message: string } | undefined {
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (!error || !isCode(error.code)) return undefined;
    return { code: error.code, message: typeof error.message === "string" ? error.message : "" };
  } catch {
    return undefined;
  }
}

/** The result of a 200, or the handler's error; anything else is the route's refusal. */
function settle(target: PeerTarget, name: string, answer: RawAnswer): unknown {
  const error = bodyError(answer.body);
  if (answer.status === 200) {
    if (error) throw new SwitchboardError(error.code, error.message);
    return (JSON.parse(answer.body) as { result?: unknown }).result;
  }
  const where = `peer call ${name} to gateway ${target.nodeId} at ${target.address}`;
  if (answer.status === 503 || !error)
    throw new PeerRefusedError("UNAVAILABLE", `${where}: ${error?.message ?? `HTTP ${answer.status}`}`);
  throw new PeerRefusedError(error.code, `${where}: ${error.message}`);
}

/** One POST; resolves with the answer, rejects on a transport failure or the timeout. */
function post(target: PeerTarget, secret: string, body: string, timeoutMs: number): Promise<RawAnswer> {
  const url = new URL(`http://${target.address}${PEER_CALL_PATH}`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        [PEER_KEY_HEADER]: peerKey(secret),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A transport failure as a SwitchboardError: refused (safe to resend) when the connection never opened. */
function unreachable(target: PeerTarget, name: string, err: unknown, timeoutMs: number): SwitchboardError {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `peer call ${name} to gateway ${target.nodeId} at ${target.address}`;
  if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENOTFOUND" || code === "ENETUNREACH")
    return new PeerRefusedError("UNAVAILABLE", `${where}: not reachable (${code})`, { cause: err });
  const timedOut = ["AbortError", "TimeoutError"].includes((err as Error).name);
  const why = timedOut ? `no answer in ${timeoutMs} ms` : (err as Error).message;
  return new SwitchboardError("UNAVAILABLE", `${where}: ${why}; it may have taken effect`, { cause: err });
}

/** The process's peer call: each call reads the relay secret (the caller caches it) and POSTs `{ to, name, params }`. */
export function createPeerCall(options: { relaySecret: () => Promise<string>; timeoutMs?: number }): PeerCall {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return async (target, name, params) => {
    const secret = await options.relaySecret();
    const body = JSON.stringify({ to: target.nodeId, name, params });
    let answer: RawAnswer;
    try {
      answer = await post(target, secret, body, timeoutMs);
    } catch (err) {
      throw unreachable(target, name, err, timeoutMs);
    }
    return settle(target, name, answer);
  };
}
