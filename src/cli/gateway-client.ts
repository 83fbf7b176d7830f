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

/** Connects and authenticates (`connect` with the token, when given); rejects when nothing listens. */
export async function connectGateway(
  url: string,
  token?: string,
  options: { timeoutMs?: number } = {},
): Promise<GatewayClient> {
  // Loaded on the first connection: commands that never reach a gateway start without it.
  const { WebSocket } = await import("ws");
  const socket = new WebSocket(url, { handshakeTimeout: options.timeoutMs ?? 5_000 });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map<string, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  const listeners = new Set<(event: string, payload: unknown) => void>();
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data)) as {
      type: string;
      id?: string;
      ok?: boolean;
      payload?: unknown;
      error?: { code: string; message: string };
      event?: string;
    };
    if (frame.type === "res" && frame.id !== undefined && pending.has(frame.id)) {
      const waiter = pending.get(frame.id)!;
      pending.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.payload);
      else
        waiter.reject(new GatewayCallError(frame.error?.code ?? "INTERNAL", frame.error?.message ?? "request failed"));
    } else if (frame.type === "event" && frame.event) {
      for (const listener of listeners) listener(frame.event, frame.payload);
    }
  });
  // After the handshake an error is followed by "close", which fails what is pending.
  socket.on("error", () => undefined);
  const closeListeners = new Set<() => void>();
  socket.on("close", () => {
    for (const waiter of pending.values()) waiter.reject(new GatewayClosedError());
    pending.clear();
    for (const listener of closeListeners) listener();
  });
  const call = <T>(method: string, params?: unknown): Promise<T> => {
    // A send on a closed socket is dropped without an error by ws: refuse it, or the caller waits forever.
    if (socket.readyState !== socket.OPEN)
      return Promise.reject(new GatewayClosedError("not connected to the gateway"));
    const id = String(nextId++);
    socket.send(JSON.stringify({ type: "req", id, method, params }));
    return new Promise<T>((resolve, reject) => pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  };
  await call("connect", token ? { auth: { token } } : {});
  return {
    call,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onClose(listener) {
      closeListeners.add(listener);
    },
    async close() {
      if (socket.readyState === socket.CLOSED) return;
      await new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        socket.close();
      });
    },
  };
}
