// The peer call (src/cluster/peer-call.ts) against its route (src/gateway/peer-route.ts) on a real
// HTTP server: a round trip, a handler's error carried back with its code, and each refusal of the
// route (no handler, another node, no or a wrong peer key and its lockout, the relay secret alone,
// a body over the limit).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { PEER_CALL_PATH, PeerRefusedError, createPeerCall } from "../../src/cluster/peer-call.js";
import { PEER_KEY_HEADER, peerKey } from "../../src/cluster/peer-key.js";
import { RELAY_SECRET_HEADER } from "../../src/cluster/relay-secret.js";
import { SwitchboardError } from "../../src/errors.js";
import { createPeerHandlers } from "../../src/gateway/peer-handlers.js";
import { createPeerLimiter, isPeerCall, servePeerCall } from "../../src/gateway/peer-route.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { createMemoryLogger } from "../../src/logger.js";
import { closersAfterEach } from "../support/closed-after-each.js";

const SECRET = "relay-secret-0123";
const closing = closersAfterEach();

const KEY = { [PEER_KEY_HEADER]: peerKey(SECRET) };

/**
 * A server answering peer calls as gateway "gw-b", its clients named by X-Forwarded-For (a proxy on
 * loopback). The gateway has no token: the peer route's lockout does not depend on one.
 */
async function peerServer(token?: string) {
  const handlers = createPeerHandlers();
  const guard = createTokenGuard({ token, trustedProxies: ["127.0.0.1"], now: Date.now });
  const deps = {
    handlers,
    guard,
    limiter: createPeerLimiter(),
    nodeId: () => "gw-b",
    relaySecret: async () => SECRET,
    logger: createMemoryLogger(),
  };
  const server = http.createServer((req, res) => {
    if (isPeerCall(req)) void servePeerCall(req, res, deps);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { handlers, address, target: { nodeId: "gw-b", address }, guard };
}

const post = (address: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`http://${address}${PEER_CALL_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });

const call = createPeerCall({ relaySecret: async () => SECRET });

describe("the peer call", () => {
  it("runs the named handler on the peer with the params and answers its result", async () => {
    const { handlers, target } = await peerServer();
    handlers.set("echo", async (params) => ({ got: params }));
    expect(await call(target, "echo", { a: [1, "x"] })).toEqual({ got: { a: [1, "x"] } });
  });

  it("carries a handler's SwitchboardError back with its code and message; it ran, so it is no refusal", async () => {
    const { handlers, target } = await peerServer();
    handlers.set("write", async () => {
      throw new SwitchboardError("NOT_OWNER", "gateway gw-b does not hold that session now");
    });
    const err = await call(target, "write", {}).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "NOT_OWNER", message: "gateway gw-b does not hold that session now" });
    expect(err).not.toBeInstanceOf(PeerRefusedError);
  });

  it("is refused, having run nothing: no handler of that name (404), another node (503), nobody listening", async () => {
    const { handlers, target, address } = await peerServer();
    const remove = handlers.set("gone", async () => "ran");
    remove();
    await expect(call(target, "gone", {})).rejects.toSatisfy(
      (e) => e instanceof PeerRefusedError && e.code === "NOT_FOUND" && /serves no peer call gone/.test(e.message),
    );
    handlers.set("echo", async () => "ran");
    await expect(call({ nodeId: "gw-c", address }, "echo", {})).rejects.toSatisfy(
      (e) =>
        e instanceof PeerRefusedError && e.code === "UNAVAILABLE" && /this gateway is gw-b, not gw-c/.test(e.message),
    );
    const raw = await post(address, JSON.stringify({ to: "gw-c", name: "echo", params: {} }), KEY);
    expect(raw.status).toBe(503);
    await expect(call({ nodeId: "gw-b", address: "127.0.0.1:1" }, "echo", {})).rejects.toSatisfy(
      (e) => e instanceof PeerRefusedError && e.code === "UNAVAILABLE",
    );
  });

  it("answers 401 without the peer key and counts each as a failed attempt, token or not: the 11th of a client is 429 even with it", async () => {
    const { handlers, address } = await peerServer();
    let ran = 0;
    handlers.set("echo", async () => ++ran);
    const body = JSON.stringify({ to: "gw-b", name: "echo", params: {} });
    const guesser = { "x-forwarded-for": "203.0.113.5" };
    expect((await post(address, body, guesser)).status).toBe(401);
    for (let i = 0; i < 9; i++)
      expect((await post(address, body, { ...guesser, [PEER_KEY_HEADER]: "wrong" })).status).toBe(401);
    const locked = await post(address, body, { ...guesser, ...KEY });
    expect([locked.status, locked.headers.get("retry-after")]).toEqual([429, "300"]);
    const other = await post(address, body, { "x-forwarded-for": "203.0.113.6", ...KEY });
    expect([other.status, await other.json()]).toEqual([200, { ok: true, result: 1 }]);
    expect(ran).toBe(1);
  });

  it("counts apart from the gateway token's failures: a client locked out of the token still makes its peer calls", async () => {
    const { handlers, address, guard } = await peerServer("the-token");
    handlers.set("echo", async () => "ran");
    const client = "203.0.113.7";
    for (let i = 0; i < 10; i++) expect(guard.check(client, "a guess")).toBe(false);
    expect(guard.retryAfterSeconds(client)).toBeGreaterThan(0);
    const body = JSON.stringify({ to: "gw-b", name: "echo", params: {} });
    const answer = await post(address, body, { "x-forwarded-for": client, ...KEY });
    expect([answer.status, await answer.json()]).toEqual([200, { ok: true, result: "ran" }]);
  });

  it("refuses the relay secret itself (401): a standby's relay adds it to whatever a client sends, so it proves no peer", async () => {
    const { handlers, address } = await peerServer();
    let ran = 0;
    handlers.set("echo", async () => ++ran);
    const body = JSON.stringify({ to: "gw-b", name: "echo", params: {} });
    const relayed = await post(address, body, { [RELAY_SECRET_HEADER]: SECRET, "x-forwarded-for": "203.0.113.7" });
    expect(relayed.status).toBe(401);
    expect(ran).toBe(0);
  });

  it("carries a known error back as itself (a retryable DATABASE_UNAVAILABLE stays so), and a bug as INTERNAL naming the gateway", async () => {
    const { handlers, target } = await peerServer();
    handlers.set("db", async () => {
      throw new SwitchboardError("DATABASE_UNAVAILABLE", "PostgreSQL is away");
    });
    handlers.set("bug", async () => {
      throw new TypeError("undefined is not a function");
    });
    await expect(call(target, "db", {})).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
      message: "PostgreSQL is away",
    });
    await expect(call(target, "bug", {})).rejects.toMatchObject({
      code: "INTERNAL",
      message: expect.stringMatching(/^gateway gw-b: internal error \(error id /),
    });
  });

  it("takes a call the gateway's JSON limit let in once wrapped, answers 413 beyond the envelope's room, and 405 to a GET", async () => {
    const { handlers, address, target } = await peerServer();
    handlers.set("echo", async (params) => (params as string).length);
    expect(await call(target, "echo", "x".repeat(1024 * 1024))).toBe(1024 * 1024);
    const big = JSON.stringify({ to: "gw-b", name: "echo", params: "x".repeat(1024 * 1024 + 64 * 1024) });
    const answer = await post(address, big, KEY);
    expect([answer.status, ((await answer.json()) as { error: { code: string } }).error.code]).toEqual([
      413,
      "TOO_LARGE",
    ]);
    expect((await fetch(`http://${address}${PEER_CALL_PATH}`)).status).toBe(405);
  });

  it("gives up after its timeout with UNAVAILABLE saying the call may have taken effect (not a refusal)", async () => {
    const { handlers, target } = await peerServer();
    handlers.set("slow", () => new Promise(() => undefined));
    const quick = createPeerCall({ relaySecret: async () => SECRET, timeoutMs: 200 });
    const err = await quick(target, "slow", {}).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: "UNAVAILABLE",
      message: expect.stringMatching(/no answer in 200 ms; it may have taken effect/),
    });
    expect(err).not.toBeInstanceOf(PeerRefusedError);
  });
});
