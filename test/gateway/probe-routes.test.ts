// GET /metrics and GET /readyz on a real gateway: who may read them (the gateway's auth rules) and
// what readiness says while the gateway runs and while it drains.
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { rawRequest } from "../support/raw-gateway.js";
import { type TestGateway, startTestGateway } from "../support/test-gateway.js";

const TOKEN = "metrics-test-token-0123456789";
const running: TestGateway[] = [];
afterEach(async () => {
  for (const gw of running.splice(0)) await gw.close().catch(() => undefined);
});

async function start(options: Parameters<typeof startTestGateway>[0] = {}): Promise<TestGateway> {
  const gw = await startTestGateway(options);
  running.push(gw);
  return gw;
}

describe("GET /metrics", () => {
  it("serves the Prometheus text format to loopback callers of a gateway without a token", async () => {
    const { gateway } = await start();
    const res = await rawRequest(gateway.port, { path: "/metrics", headers: { host: `127.0.0.1:${gateway.port}` } });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain("# TYPE switchboard_inbound_messages_total counter");
  });

  it("refuses a non-loopback Host name, a browser page of another origin and other methods", async () => {
    const { gateway } = await start();
    const port = gateway.port;
    const rebound = await rawRequest(port, { path: "/metrics", headers: { host: `evil.example:${port}` } });
    expect(rebound.status).toBe(403);
    const page = await rawRequest(port, {
      path: "/metrics",
      headers: { host: `127.0.0.1:${port}`, origin: "https://evil.example" },
    });
    expect(page.status).toBe(403);
    const post = await rawRequest(port, { method: "POST", path: "/metrics", headers: { host: `127.0.0.1:${port}` } });
    expect(post.status).toBe(405);
  });

  it("wants the bearer token from every client once a token is set, loopback ones included", async () => {
    const { gateway } = await start({ token: TOKEN });
    const get = (headers: Record<string, string>) => rawRequest(gateway.port, { path: "/metrics", headers });
    expect((await get({})).status).toBe(401);
    expect((await get({ authorization: "Bearer wrong-token-000000000000" })).status).toBe(401);
    const ok = await get({ authorization: `bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain("switchboard_journal_sync_duration_seconds");
  });
});

describe("GET /readyz", () => {
  it("answers 200 with each part and its reason once started; without the token only the verdict", async () => {
    const { gateway } = await start({ token: TOKEN });
    const full = await rawRequest(gateway.port, { path: "/readyz", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(full.status).toBe(200);
    expect(full.body).toEqual({
      ready: true,
      phase: "ready",
      parts: [{ kind: "state", name: "state", ok: true, reason: "stores open, replay done" }],
    });
    const bare = await rawRequest(gateway.port, { path: "/readyz" });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ ready: true, phase: "ready" });
  });

  it("answers 503 (draining) from the moment a stop begins while a turn finishes, and /healthz stays 200", async () => {
    let finish!: () => void;
    const model = createScriptedModel([{ text: "done at last", until: new Promise<void>((r) => (finish = r)) }]);
    const gw = await start({ model });
    const client = await gw.client();
    await client.call("chat.send", { message: "take your time" });
    await expect.poll(() => gw.gateway.core.lanes.stats().some((lane) => lane.running)).toBe(true);
    const closing = gw.gateway.close();
    const port = gw.gateway.port;
    await expect.poll(async () => (await rawRequest(port, { path: "/readyz" })).status).toBe(503);
    const draining = await rawRequest(port, { path: "/readyz", headers: { host: `127.0.0.1:${port}` } });
    expect(draining.body).toMatchObject({ ready: false, phase: "draining" });
    expect(draining.body.parts[0]).toMatchObject({
      name: "state",
      ok: false,
      reason: expect.stringMatching(/^draining/),
    });
    expect((await rawRequest(port, { path: "/healthz" })).status).toBe(200);
    const api = await rawRequest(port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });
    expect(api.status).toBe(503);
    finish();
    await closing;
    // Stopped: the port answers nothing (refused, or a kept-alive socket hung up).
    await expect(rawRequest(port, { path: "/readyz" })).rejects.toThrow(/ECONNREFUSED|socket hang up|ECONNRESET/);
  });
});
