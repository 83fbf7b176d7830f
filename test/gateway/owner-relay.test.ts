import http from "node:http";
import type net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { rawRequest } from "../support/raw-gateway.js";
import { RELAY_SECRET, cleanups, fakeOwner, listen, relayTo } from "../support/stand-in-owner.js";
import { useTestGateways } from "../support/test-gateway.js";

const startGateway = useTestGateways();

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Opens a WebSocket to `port`; resolves once open, with how it closes. */
async function open(port: number) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?x=1`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const frames: Array<{ data: string; binary: boolean }> = [];
  ws.on("message", (data, binary) => frames.push({ data: String(data), binary }));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("close", resolve);
    ws.once("error", reject);
  });
  return { ws, closed, frames };
}

describe("createOwnerRelay", () => {
  it("relays method, path, query and a streamed body; the owner's status and headers come back, its connection's do not", async () => {
    const owner = await fakeOwner();
    const { port, refreshes } = await relayTo(() => owner.owner);
    const body = Buffer.alloc(3 * 1024 * 1024, 7);
    const answer = await rawRequest(port, {
      method: "PUT",
      path: "/hooks/agent?a=1&b=2",
      headers: { "content-type": "application/octet-stream", "x-forwarded-for": "203.0.113.7", "keep-alive": "5" },
      body,
    });
    expect([answer.status, answer.body, answer.headers["x-owner"]]).toEqual([201, { bytes: body.length }, "yes"]);
    expect(answer.headers.connection).not.toBe("close");
    const [request] = owner.seen;
    expect(request).toMatchObject({ method: "PUT", url: "/hooks/agent?a=1&b=2", bytes: body.length });
    expect(request!.headers).toMatchObject({ "x-forwarded-for": "203.0.113.7", "x-switchboard-relay": RELAY_SECRET });
    expect(request!.headers["keep-alive"]).toBeUndefined();
    expect(refreshes()).toBe(0);
  });

  it("pipes WebSocket frames both ways, text and binary, and passes close codes through in both directions", async () => {
    const owner = await fakeOwner();
    const { port } = await relayTo(() => owner.owner);
    const first = await open(port);
    expect(owner.seen.at(-1)).toMatchObject({ method: "UPGRADE", url: "/ws?x=1" });
    expect(owner.seen.at(-1)!.headers["x-switchboard-relay"]).toBe(RELAY_SECRET);
    first.ws.send("hello");
    first.ws.send(Buffer.from([1, 2, 3]));
    await expect
      .poll(() => first.frames)
      .toEqual([
        { data: "hello", binary: false },
        { data: "\u0001\u0002\u0003", binary: true },
      ]);
    owner.sockets[0]!.close(4321, "owner says bye");
    expect(await first.closed).toEqual({ code: 4321, reason: "owner says bye" });

    const second = await open(port);
    const ownerSide = owner.sockets[1]!;
    const ownerClosed = new Promise<number>((resolve) => ownerSide.once("close", (code) => resolve(code)));
    second.ws.close(4000, "client leaves");
    expect(await ownerClosed).toBe(4000);
  });

  it("closes the client 1012 when the owner's socket ends without a close frame, and every client at close()", async () => {
    const owner = await fakeOwner();
    const { port, relay } = await relayTo(() => owner.owner);
    const cut = await open(port);
    owner.sockets[0]!.terminate();
    expect((await cut.closed).code).toBe(1012);
    const open1 = await open(port);
    const open2 = await open(port);
    await relay.close();
    expect([(await open1.closed).code, (await open2.closed).code]).toEqual([1012, 1012]);
  });

  it("answers 503 UNAVAILABLE with Retry-After: 1 and closes WebSockets 1013 when the owner does not answer, and reads the owner again", async () => {
    const gone = http.createServer();
    const deadPort = await listen(gone);
    await new Promise((resolve) => gone.close(resolve));
    const { port, refreshes } = await relayTo(() => ({ nodeId: "gw-gone", address: `127.0.0.1:${deadPort}` }));
    const answer = await rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    expect([answer.status, answer.headers["retry-after"], answer.body]).toEqual([
      503,
      "1",
      {
        ok: false,
        error: {
          code: "UNAVAILABLE",
          message: `this gateway is a standby; the owner is gw-gone at 127.0.0.1:${deadPort}`,
        },
      },
    ]);
    expect(refreshes()).toBe(1);
    const ws = await open(port);
    expect((await ws.closed).code).toBe(1013);
  });

  it("refuses a foreign page's Origin at the standby, before anything reaches the owner", async () => {
    const owner = await fakeOwner();
    const { port } = await relayTo(() => owner.owner);
    const answer = await rawRequest(port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { origin: "https://evil.example", "content-type": "application/json" },
      body: "{}",
    });
    expect([answer.status, answer.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect(owner.seen).toEqual([]);
  });

  it("never relays a peer call (POST /cluster/call): the relay would add its secret to a client's request; 403, nothing reaches the owner", async () => {
    const owner = await fakeOwner();
    const { port } = await relayTo(() => owner.owner);
    const answer = await rawRequest(port, {
      method: "POST",
      path: "/cluster/call",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to: "gw-owner", name: "method:sessions.delete", params: {} }),
    });
    expect([answer.status, answer.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect(owner.seen).toEqual([]);
  });

  it("relays a real gateway's 413 that comes before the whole body, for each of 10 bodies: the owner keeps reading, so the relay is not reset and never answers 503", async () => {
    const gw = await startGateway();
    const { port, logger } = await relayTo(() => ({ nodeId: "gw-owner", address: `127.0.0.1:${gw.gateway.port}` }));
    const big = JSON.stringify({ tool: "sessions_list", args: { pad: "x".repeat(2 * 1024 * 1024) } });
    const headers = { "content-type": "application/json" };
    for (let i = 0; i < 10; i++) {
      const answer = await rawRequest(port, { method: "POST", path: "/tools/invoke", headers, body: big });
      expect([answer.status, answer.body.error?.code]).toEqual([413, "INVALID_REQUEST"]);
    }
    expect(logger.records.filter((r) => r.message === "relay to the owner failed")).toEqual([]);
  }, 60_000);

  it("closes its connection to the owner once an answer that came before the whole body is relayed: the owner is not left waiting for the rest", async () => {
    const connections: net.Socket[] = [];
    const early = http.createServer((_req, res) =>
      res.writeHead(413, { "content-type": "application/json" }).end("{}"),
    );
    early.on("connection", (socket: net.Socket) => connections.push(socket));
    const ownerPort = await listen(early);
    const { port } = await relayTo(() => ({ nodeId: "gw-owner", address: `127.0.0.1:${ownerPort}` }));
    // The client leaves after its answer: only the relay's connection to the owner is watched here.
    const headers = { "content-type": "application/json", connection: "close" };
    const answer = await rawRequest(port, { method: "POST", path: "/", headers, body: Buffer.alloc(2 * 1024 * 1024) });
    expect(answer.status).toBe(413);
    expect(connections).toHaveLength(1);
    // Left alone, the owner would wait for the rest until Node's agent drops the idle socket (5 s).
    await expect.poll(() => connections[0]!.destroyed, { timeout: 3_000 }).toBe(true);
  });

  it("answers 503 when the owner's connection breaks mid-body, drops the rest of the body, and the client's connection serves its next request", async () => {
    const cutting = http.createServer((req) => {
      let bytes = 0;
      req.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > 256 * 1024) req.socket.destroy(); // the owner dies while the body streams
      });
    });
    const ownerPort = await listen(cutting);
    const { port } = await relayTo(() => ({ nodeId: "gw-owner", address: `127.0.0.1:${ownerPort}` }));
    // One connection, kept: the second request goes on the first one's.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    const send = () =>
      new Promise<{ status?: number; reused: boolean }>((resolve, reject) => {
        const request = http.request(
          { host: "127.0.0.1", port, agent, method: "POST", path: "/hooks/agent" },
          (res) => {
            res.resume();
            res.once("end", () => resolve({ status: res.statusCode, reused: request.reusedSocket }));
          },
        );
        request.once("error", reject);
        request.end(Buffer.alloc(2 * 1024 * 1024));
      });
    expect(await send()).toEqual({ status: 503, reused: false });
    expect(await send()).toEqual({ status: 503, reused: true });
  });
});
