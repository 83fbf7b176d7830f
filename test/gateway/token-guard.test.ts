import { describe, expect, it } from "vitest";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { rawRequest, rawSocket, req } from "../support/raw-gateway.js";
import { useTestGateways } from "../support/test-gateway.js";

const TOKEN = "s3cret-token-0123456789";
const start = useTestGateways();

describe("createTokenGuard", () => {
  it("locks a client out for 5 minutes after 10 wrong tokens in a minute, and leaves others alone", () => {
    const clock = createManualClock();
    const guard = createTokenGuard({ token: TOKEN, trustedProxies: [], now: clock.now });
    for (let i = 0; i < 9; i++) expect(guard.check("203.0.113.5", "wrong")).toBe(false);
    expect(guard.retryAfterSeconds("203.0.113.5")).toBe(0);
    guard.check("203.0.113.5", "wrong");
    expect(guard.retryAfterSeconds("203.0.113.5")).toBe(300);
    expect(guard.retryAfterSeconds("203.0.113.6")).toBe(0);
    clock.advance(300_000);
    expect(guard.retryAfterSeconds("203.0.113.5")).toBe(0);
    expect(guard.check("203.0.113.5", TOKEN)).toBe(true);
  });

  it("never locks out a loopback operator", () => {
    const guard = createTokenGuard({ token: TOKEN, trustedProxies: [], now: () => 0 });
    for (let i = 0; i < 50; i++) guard.check("127.0.0.1", "wrong");
    expect(guard.retryAfterSeconds("127.0.0.1")).toBe(0);
    expect(guard.check("127.0.0.1", TOKEN)).toBe(true);
  });
});

describe("gateway token attempts through a real gateway", () => {
  /** A gateway behind a reverse proxy on loopback: X-Forwarded-For names each client. */
  const proxied = () => start({ token: TOKEN, config: { gateway: { trustedProxies: ["127.0.0.1"] } } });
  const invoke = (port: number, forwardedFor: string | undefined, token: string) =>
    rawRequest(port, {
      method: "POST",
      path: "/tools/invoke",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${token}`,
        ...(forwardedFor && { "x-forwarded-for": forwardedFor }),
      },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });

  it("answers 429 to the 11th attempt of a guessing client, even with the right token, and serves everyone else", async () => {
    const gw = await proxied();
    const { port } = gw.gateway;
    for (let i = 0; i < 10; i++) expect((await invoke(port, "203.0.113.5", "wrong")).status).toBe(401);
    const locked = await invoke(port, "203.0.113.5", TOKEN);
    expect([locked.status, locked.body.error.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(locked.headers["retry-after"])).toBe(300);
    await expect(rawSocket(port, { "x-forwarded-for": "203.0.113.5" })).rejects.toMatchObject({
      status: 429,
      body: { ok: false, error: { code: "RATE_LIMITED" } },
    });
    // Another client behind the same proxy, and the operator on the machine itself, are not locked out.
    expect((await invoke(port, "203.0.113.6", TOKEN)).status).toBe(200);
    expect((await invoke(port, undefined, TOKEN)).status).toBe(200);
  });

  it("counts tokens presented to /readyz: a guessing client learns nothing past the limit, not even with the right token", async () => {
    const gw = await proxied();
    const { port } = gw.gateway;
    const readyz = (token: string) =>
      rawRequest(port, {
        path: "/readyz",
        headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "203.0.113.8" },
      });
    for (let i = 0; i < 10; i++) expect((await readyz(`wrong-${i}`)).body.parts).toBeUndefined();
    const locked = await readyz(TOKEN);
    expect(locked.body).toEqual({ ready: true, phase: "ready" }); // the verdict only: the right token is not confirmed
    expect((await invoke(port, "203.0.113.8", TOKEN)).status).toBe(429);
  });

  it("counts wrong connect tokens on WebSockets the same way", async () => {
    const gw = await proxied();
    const { port } = gw.gateway;
    for (let i = 0; i < 10; i++) {
      const ws = await rawSocket(port, { "x-forwarded-for": "203.0.113.9" });
      ws.send(req("c", "connect", { auth: { token: "wrong" } }));
      expect((await ws.closed).code).toBe(4401);
    }
    await expect(rawSocket(port, { "x-forwarded-for": "203.0.113.9" })).rejects.toMatchObject({ status: 429 });
    const operator = await rawSocket(port);
    operator.send(req("c", "connect", { auth: { token: TOKEN } }));
    expect(await operator.next((f) => f.id === "c")).toMatchObject({ ok: true });
    operator.close();
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    const gw = await start({ token: TOKEN });
    // From loopback, untrusted: the header is not read, the peer is loopback and never locked out.
    for (let i = 0; i < 12; i++) await invoke(gw.gateway.port, "203.0.113.5", "wrong");
    expect((await invoke(gw.gateway.port, "203.0.113.5", TOKEN)).status).toBe(200);
  });
});
