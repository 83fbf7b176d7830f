// One owner of a relayed client socket's pause (src/gateway/relay-flow.ts `pausesOf`): relay-flow's
// backpressure and relay-reads' frame queue each pause it for their own reason, and it is read again
// only once neither holds it; frames the queue held back go on through relay-flow's bounds. Fake
// sockets: the owner's backlog (`bufferedAmount`) and the write callbacks are ours to drive.
import { afterEach, expect, it } from "vitest";
import { type RelayFlow, forwardFrames } from "../../src/gateway/relay-flow.js";
import { relayReads } from "../../src/gateway/relay-reads.js";
import { createMemoryLogger } from "../../src/logger.js";
import { FakeSocket } from "../support/fake-socket.js";

const MiB = 1024 * 1024;
const FLOW: RelayFlow = {
  highWaterBytes: MiB,
  lowWaterBytes: 256 * 1024,
  hardCapBytes: 8 * MiB,
  stallMs: 60_000,
  pingMs: 60_000,
};
const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** The owner's side: its backlog is what the test says, and each write's callback waits for `drain`. */
class OwnerSocket extends FakeSocket {
  bufferedAmount = 0;
  private callbacks: Array<() => void> = [];
  override send(data: unknown, _options?: unknown, written?: () => void) {
    super.send(data);
    if (written) this.callbacks.push(written);
  }
  /** The backlog went to the kernel: each write's callback runs, as ws calls them. */
  drain() {
    this.bufferedAmount = 0;
    for (const written of this.callbacks.splice(0)) written();
  }
}

const chatSend = (id: string, message = `m${id}`) =>
  Buffer.from(
    JSON.stringify({
      type: "req",
      id,
      method: "chat.send",
      params: { sessionKey: "agent:main:webchat:dm:ada", message, idempotencyKey: `k-${id}` },
    }),
  );

/** A store that never ends (a database away is waited out). */
const hang = () => new Promise<undefined>(() => undefined);

/** A client relayed to `upstream` through relay-flow and relay-reads, as relay-socket wires them; the standby's stores never end, or `answer`. */
function wired(upstream: OwnerSocket, stalled: () => void = () => undefined, answer = hang) {
  const client = new FakeSocket();
  const reads = { serves: (method: string) => method === "chat.send", answer, close: async () => undefined };
  let sendOn: (data: Buffer, isBinary: boolean) => void = () => undefined;
  const relays = relayReads(client.ws, upstream.ws, { reads, token: "t", logger: createMemoryLogger() }, (d, b) =>
    sendOn(d as Buffer, b),
  );
  const forwarding = forwardFrames(client.ws, upstream.ws, FLOW, stalled, relays);
  sendOn = forwarding.send;
  stops.push(forwarding.stop);
  const frame = (data: Buffer) => client.emit("message", data, false);
  frame(Buffer.from(JSON.stringify({ type: "req", id: "c", method: "connect", params: { auth: { token: "t" } } })));
  upstream.frame({ type: "res", id: "c", ok: true, payload: { client: "cli" } });
  return { client, frame };
}

it("keeps the client paused while 256 frames wait, though the owner's backlog drained and backpressure let go", () => {
  const upstream = new OwnerSocket();
  const { client, frame } = wired(upstream);
  upstream.bufferedAmount = 2 * MiB; // the owner does not read: the next relayed frame pauses the client
  frame(Buffer.from(JSON.stringify({ type: "req", id: "s", method: "status" })));
  expect(client.paused).toBe(true);
  for (let i = 0; i < 256; i++) frame(chatSend(String(i))); // the first store hangs: 256 wait
  upstream.drain(); // relay-flow lets go of its pause
  expect(client.paused).toBe(true); // before: false, and the queue grew without bound from here
});

it("pauses the client when the frames waiting reach 1 MiB, fewer than 256 of them", () => {
  const upstream = new OwnerSocket();
  const { client, frame } = wired(upstream);
  frame(chatSend("0")); // its store hangs
  frame(chatSend("1", "x".repeat(600 * 1024)));
  expect(client.paused).toBe(false);
  frame(chatSend("2", "x".repeat(600 * 1024)));
  expect(client.paused).toBe(true); // before: read on, the bound counted frames only
});

it("sends a frame it held back through relay-flow's bounds: past the hard cap the relay ends", async () => {
  const upstream = new OwnerSocket();
  let stalled!: () => void;
  const ended = new Promise<void>((resolve) => {
    stalled = resolve;
  });
  const { frame } = wired(upstream, stalled, async () => undefined); // not answered here: relayed after all
  upstream.bufferedAmount = 9 * MiB; // the owner reads nothing
  frame(chatSend("0"));
  await ended; // before: sent straight on the socket, past every bound
  expect(upstream.sent).toHaveLength(2); // the connect and the chat.send
});
