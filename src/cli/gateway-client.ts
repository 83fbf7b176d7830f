import { createRequire } from "node:module";
import type { WebSocket } from "ws";

/** A failure the gateway answered with `{code, message}`. */
export class GatewayCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "GatewayCallError";
  }
}

/** A call the connection ended before the gateway answered (or made when none was open): the gateway may not have seen it. */
export class GatewayClosedError extends GatewayCallError {
  constructor(message = "connection to the gateway closed") {
    super("UNAVAILABLE", message);
    this.name = "GatewayClosedError";
  }
}

/** A connected gateway client. */
export interface GatewayClient {
  call<T = unknown>(method: string, params?: unknown): Promise<T>;
  onEvent(listener: (event: string, payload: unknown) => void): () => void;
  /** hears the connection end, whoever ended it (the gateway stopped or died, or `close()`) */
  onClose(listener: () => void): void;
  close(): Promise<void>;
}

/** The URL of the local gateway for `port`. */
export function defaultGatewayUrl(port: number): string {
  return `ws://127.0.0.1:${port}`;
}

/** A frame the gateway sends: a response to a request, or an event. */
interface GatewayFrame {
  type: string;
  id?: string;
  ok?: boolean;
  payload?: unknown;
  error?: { code: string; message: string };
  event?: string;
}

/** The requests waiting for their response, and who hears events and the close. */
interface ClientState {
  nextId: number;
  pending: Map<string, { resolve: (value: unknown) => void; reject: (err: Error) => void }>;
  listeners: Set<(event: string, payload: unknown) => void>;
  closeListeners: Set<() => void>;
}

async function openSocket(url: string, timeoutMs: number): Promise<WebSocket> {
  // Loaded on the first connection: commands that never reach a gateway start without it. Required,
  // not imported: `import("ws")` goes through its ESM wrapper and Node's CommonJS export lexer on each
  // of its files: `status` with a gateway running took 264 ms of CPU, now 206 (docs/performance.md).
  const { WebSocket } = createRequire(import.meta.url)("ws") as typeof import("ws");
  const socket = new WebSocket(url, { handshakeTimeout: timeoutMs });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return socket;
}

/** Settles the request a response answers, or hands an event to the listeners. */
function receive(state: ClientState, data: unknown): void {
  const frame = JSON.parse(String(data)) as GatewayFrame;
  if (frame.type === "res" && frame.id !== undefined && state.pending.has(frame.id)) {
    const waiter = state.pending.get(frame.id)!;
    state.pending.delete(frame.id);
    if (frame.ok) waiter.resolve(frame.payload);
    else waiter.reject(new GatewayCallError(frame.error?.code ?? "INTERNAL", frame.error?.message ?? "request failed"));
  } else if (frame.type === "event" && frame.event) {
    for (const listener of state.listeners) listener(frame.event, frame.payload);
  }
}

/** Fails every pending request and tells the close listeners. */
function closed(state: ClientState): void {
  for (const waiter of state.pending.values()) waiter.reject(new GatewayClosedError());
  state.pending.clear();
  for (const listener of state.closeListeners) listener();
}

function caller(socket: WebSocket, state: ClientState) {
  return <T>(method: string, params?: unknown): Promise<T> => {
    // A send on a closed socket is dropped without an error by ws: refuse it, or the caller waits forever.
    if (socket.readyState !== socket.OPEN)
      return Promise.reject(new GatewayClosedError("not connected to the gateway"));
    const id = String(state.nextId++);
    socket.send(JSON.stringify({ type: "req", id, method, params }));
    return new Promise<T>((resolve, reject) =>
      state.pending.set(id, { resolve: resolve as (v: unknown) => void, reject }),
    );
  };
}

async function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === socket.CLOSED) return;
  await new Promise<void>((resolve) => {
    socket.once("close", () => resolve());
    socket.close();
  });
}

/** Connects and authenticates (`connect` with the token, when given); rejects when nothing listens. */
export async function connectGateway(
  url: string,
  token?: string,
  options: { timeoutMs?: number } = {},
): Promise<GatewayClient> {
  const socket = await openSocket(url, options.timeoutMs ?? 5_000);
  const state: ClientState = { nextId: 1, pending: new Map(), listeners: new Set(), closeListeners: new Set() };
  socket.on("message", (data) => receive(state, data));
  // After the handshake an error is followed by "close", which fails what is pending.
  socket.on("error", () => undefined);
  socket.on("close", () => closed(state));
  const call = caller(socket, state);
  await call("connect", token ? { auth: { token } } : {});
  return {
    call,
    onEvent(listener) {
      state.listeners.add(listener);
      return () => state.listeners.delete(listener);
    },
    onClose(listener) {
      state.closeListeners.add(listener);
    },
    close: () => closeSocket(socket),
  };
}
