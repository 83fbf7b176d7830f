// A resume URL whose server takes the connection and then stops answering, for the replay's bounds
// (adapters/discord/replay-session.ts): it either never answers the WebSocket upgrade, or answers
// it and sends HELLO, then never answers the RESUME nor the close that follows.
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

/** Where a {@link silentGateway} stops answering. */
export type Silence = "upgrade" | "resume";

/** The key RFC 6455 adds to the client's Sec-WebSocket-Key before hashing it into Sec-WebSocket-Accept. */
const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** An unmasked server-to-client text frame (a payload under 126 bytes). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}

/** Answers the upgrade by hand (a `ws` server would answer the close), then HELLO, and nothing more. */
function answerUpgrade(req: http.IncomingMessage, socket: Duplex): void {
  const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}${WS_GUID}`).digest("base64");
  const head = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade"];
  socket.write([...head, `Sec-WebSocket-Accept: ${accept}`, "", ""].join("\r\n"));
  socket.write(textFrame(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } })));
}

/** A server on 127.0.0.1 that goes silent at `silence`. */
export async function silentGateway(silence: Silence) {
  const server = http.createServer().listen(0, "127.0.0.1");
  const sockets: Duplex[] = [];
  let heard = false;
  server.on("upgrade", (req, socket: Duplex) => {
    sockets.push(socket);
    if (silence === "resume") answerUpgrade(req, socket);
    socket.on("data", () => (heard = true));
  });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    resumeUrl: `ws://127.0.0.1:${port}`,
    /** true once the client is where the server goes silent: it asked to upgrade, or sent its RESUME */
    waiting: () => (silence === "upgrade" ? sockets.length > 0 : heard),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
