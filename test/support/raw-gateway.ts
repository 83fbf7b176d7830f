// Raw HTTP and WebSocket clients for a test gateway: real headers (Origin, Host, content-type),
// raw frames, and the answer or refusal exactly as a browser or attacker would see it.
import http from "node:http";
import WebSocket from "ws";

/** An HTTP answer: status, headers and the parsed JSON body (or the text when not JSON). */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** Sends one HTTP request with exactly the given headers and body. */
export function rawRequest(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path ?? "/",
        headers: options.headers ?? {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** A raw WebSocket: frames in, every frame out, and how it closed. */
export interface RawSocket {
  socket: WebSocket;
  frames: any[];
  send(data: string | Buffer, binary?: boolean): void;
  /** Resolves with the next frame that matches. */
  next(accept?: (frame: any) => boolean, timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number }>;
  close(): void;
  /**
   * Resolves once the gateway answered a request sent now, or closed the socket: the server writes
   * a socket's frames in order, so every frame it sent before has arrived.
   */
  flush(): Promise<void>;
}

let flushes = 0;

/** Opens a WebSocket with the given headers; rejects with the HTTP status and body of a refused upgrade. */
export function rawSocket(port: number, headers: Record<string, string> = {}): Promise<RawSocket> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, { headers });
  const frames: any[] = [];
  const waiters: Array<{ accept: (f: any) => boolean; resolve: (f: any) => void }> = [];
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data));
    frames.push(frame);
    for (const w of [...waiters]) if (w.accept(frame)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(frame);
  });
  socket.on("error", () => undefined);
  const closed = new Promise<{ code: number }>((resolve) => socket.once("close", (code) => resolve({ code })));
  return new Promise((resolve, reject) => {
    socket.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body }));
      });
    });
    socket.once("error", reject);
    socket.once("open", () =>
      resolve({
        socket,
        frames,
        closed,
        send: (data, binary = false) => socket.send(data, { binary }),
        next(accept = () => true, timeoutMs = 5_000) {
          const seen = frames.find(accept);
          if (seen) return Promise.resolve(seen);
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error("no matching frame")), timeoutMs);
            waiters.push({
              accept,
              resolve: (f) => {
                clearTimeout(timer);
                res(f);
              },
            });
          });
        },
        close: () => socket.close(),
        async flush(this: RawSocket) {
          if (socket.readyState !== socket.OPEN) return void (await closed);
          const id = `flush-${++flushes}`;
          socket.send(req(id, "agents.list"));
          const answered = this.next((f: { id?: string }) => f.id === id);
          answered.catch(() => undefined); // a socket the gateway closed never answers; `closed` settles instead
          await Promise.race([answered, closed]);
        },
      }),
    );
  });
}

/** A request frame. */
export const req = (id: string, method: string, params?: unknown) =>
  JSON.stringify({ type: "req", id, method, ...(params !== undefined && { params }) });
