// A stand-in for one side of a relayed WebSocket (src/gateway/relay-reads.ts tests): it records what
// is sent on it, and `frame` delivers a text frame to its listeners as `ws` does.
import { EventEmitter } from "node:events";
import { WebSocket } from "ws";

/** A socket that records what is sent on it; `frame` delivers a text frame as `ws` does. */
export class FakeSocket extends EventEmitter {
  readyState: number = WebSocket.OPEN;
  sent: string[] = [];
  paused = false;
  send(data: unknown) {
    this.sent.push(String(data));
  }
  frame(value: object) {
    this.emit("message", Buffer.from(JSON.stringify(value)), false);
  }
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
  /** As a `WebSocket`, for the code under test. */
  get ws(): WebSocket {
    return this as unknown as WebSocket;
  }
}

/** The ids of the frames sent on `socket`, in order. */
export const sentIds = (socket: FakeSocket): unknown[] => socket.sent.map((s) => JSON.parse(s).id);
