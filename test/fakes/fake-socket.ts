// A WebSocket stand-in for the relay tests (test/gateway/relay-reads.test.ts, standby-chat-send.test.ts).
import { EventEmitter } from "node:events";
import { WebSocket } from "ws";

/** A socket that records what is sent on it; `frame` delivers a text frame as `ws` does. */
export class FakeSocket extends EventEmitter {
  readyState: number = WebSocket.OPEN;
  sent: string[] = [];
  send(data: unknown) {
    this.sent.push(String(data));
  }
  frame(value: object) {
    this.emit("message", Buffer.from(JSON.stringify(value)), false);
  }
}
