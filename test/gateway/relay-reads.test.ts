// Which reads a standby answers itself on a relayed socket (src/gateway/relay-reads.ts, docs/scale-out.md
// "Reads on a standby", "Auth is the same"): only once the owner accepted the client's `connect` and
// the token presented is also the standby's own. Fake sockets: the owner's answers are frames we emit.
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { relayReads } from "../../src/gateway/relay-reads.js";
import type { StandbyReads } from "../../src/gateway/standby-front.js";
import { createMemoryLogger } from "../../src/logger.js";
import { FakeSocket } from "../support/fake-socket.js";

const text = (value: object) => Buffer.from(JSON.stringify(value));
const connect = (token: string) => ({ type: "req", id: "c1", method: "connect", params: { auth: { token } } });
const LIST = { type: "req", id: "r1", method: "sessions.list", params: {} };

/** A relayed socket whose standby has token `standbyToken`; `asked` lists the reads the standby answered. */
function relayed(standbyToken: string | undefined) {
  const client = new FakeSocket();
  const upstream = new FakeSocket();
  const asked: unknown[] = [];
  const reads: StandbyReads = {
    serves: (method) => method === "sessions.list",
    answer: async (frame) => {
      asked.push(frame);
      return { type: "res", id: "r1", ok: true, payload: { count: 0, sessions: [] } };
    },
    close: async () => undefined,
  };
  const deps = { reads, token: standbyToken, logger: createMemoryLogger() };
  const filter = relayReads(client as unknown as WebSocket, upstream as unknown as WebSocket, deps);
  /** The client's frame through the filter: true when it is relayed to the owner. */
  const send = (value: object) => filter(text(value), false);
  return { client, upstream, asked, send };
}

/** Lets the standby's async answer (if any) reach the client. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("reads on a relayed socket", () => {
  it("are answered by the standby once the owner accepted a connect with the standby's own token", async () => {
    const r = relayed("shared-token");
    expect(r.send(connect("shared-token"))).toBe(true);
    r.upstream.frame({ type: "res", id: "c1", ok: true, payload: { client: "cli" } });
    expect(r.send(LIST)).toBe(false);
    await settle();
    expect(r.asked).toHaveLength(1);
    expect(r.client.sent.map((s) => JSON.parse(s).id)).toEqual(["r1"]);
  });

  it("are all relayed when the owner accepted a token the standby is not configured with", async () => {
    const r = relayed("standby-token");
    expect(r.send(connect("owner-token"))).toBe(true);
    r.upstream.frame({ type: "res", id: "c1", ok: true, payload: { client: "cli" } });
    expect(r.send(LIST)).toBe(true);
    await settle();
    expect(r.asked).toEqual([]);
    expect(r.client.sent).toEqual([]);
  });

  it("are relayed before connect, and after a connect the owner refused", async () => {
    const r = relayed("shared-token");
    expect(r.send(LIST)).toBe(true);
    r.send(connect("shared-token"));
    r.upstream.frame({ type: "res", id: "c1", ok: false, error: { code: "UNAUTHORIZED", message: "bad token" } });
    expect(r.send(LIST)).toBe(true);
    await settle();
    expect(r.asked).toEqual([]);
  });
});
