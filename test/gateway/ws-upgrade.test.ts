import { describe, expect, it } from "vitest";
import { type RawSocket, rawSocket, req } from "../support/raw-gateway.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

describe("createUpgradeHandler", () => {
  it("closes a socket that sends no connect within the deadline with 4401, and keeps one that did", async () => {
    const gw = await start({ connectionLimits: { connectDeadlineMs: 150 } });
    const idle = await rawSocket(gw.gateway.port);
    const active = await rawSocket(gw.gateway.port);
    active.send(req("c", "connect", {}));
    await active.next((f) => f.id === "c");
    expect((await idle.closed).code).toBe(4401);
    expect(idle.frames).toEqual([
      expect.objectContaining({ ok: false, error: { code: "UNAUTHORIZED", message: "no connect within 150 ms" } }),
    ]);
    // Past the deadline, the authenticated one still answers.
    active.send(req("a", "agents.list"));
    expect(await active.next((f) => f.id === "a")).toMatchObject({ ok: true });
    active.close();
  });

  it("refuses sockets over the per-client cap of unauthenticated ones with 503, and admits again once one connects", async () => {
    const gw = await start({ connectionLimits: { pendingPerClient: 3, pendingTotal: 100 } });
    const { port } = gw.gateway;
    const waiting: RawSocket[] = [];
    for (let i = 0; i < 3; i++) waiting.push(await rawSocket(port));
    await expect(rawSocket(port)).rejects.toMatchObject({
      status: 503,
      body: { ok: false, error: { code: "UNAVAILABLE", message: expect.stringContaining("waiting to authenticate") } },
    });
    waiting[0]!.send(req("c", "connect", {}));
    await waiting[0]!.next((f) => f.id === "c");
    const next = await rawSocket(port);
    next.send(req("c", "connect", {}));
    expect(await next.next((f) => f.id === "c")).toMatchObject({ ok: true });
    for (const ws of [...waiting, next]) ws.close();
  });

  it("caps unauthenticated sockets in total across clients", async () => {
    const gw = await start({
      config: { gateway: { trustedProxies: ["127.0.0.1"] } },
      connectionLimits: { pendingPerClient: 5, pendingTotal: 2 },
    });
    const from = (client: string) => rawSocket(gw.gateway.port, { "x-forwarded-for": client });
    const waiting = [await from("198.51.100.1"), await from("198.51.100.2")];
    await expect(from("198.51.100.3")).rejects.toMatchObject({ status: 503 });
    for (const ws of waiting) ws.close();
  });

  it("frees the slot of a socket that closes without connecting", async () => {
    const gw = await start({ connectionLimits: { pendingPerClient: 1, pendingTotal: 1 } });
    const first = await rawSocket(gw.gateway.port);
    await expect(rawSocket(gw.gateway.port)).rejects.toMatchObject({ status: 503 });
    first.close();
    await first.closed;
    await expect
      .poll(
        async () =>
          await rawSocket(gw.gateway.port).then(
            (ws) => ws.close(),
            () => "refused",
          ),
      )
      .toBe(undefined);
  });

  it("answers a refused Origin with 403 and code FORBIDDEN, as the hooks do", async () => {
    const gw = await start();
    await expect(rawSocket(gw.gateway.port, { origin: "http://evil.example" })).rejects.toMatchObject({
      status: 403,
      body: { ok: false, error: { code: "FORBIDDEN", message: expect.stringContaining("gateway.allowedOrigins") } },
    });
  });
});
