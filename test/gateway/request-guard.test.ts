import os from "node:os";
import { describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { rawRequest, rawSocket, req } from "../support/raw-gateway.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const json = { "content-type": "application/json" };
const listBody = JSON.stringify({ tool: "sessions_list", args: {} });

describe("browser origin check", () => {
  it("refuses a WebSocket from another origin and accepts the gateway's own page and the CLI", async () => {
    const gw = await start();
    const { port } = gw.gateway;
    await expect(rawSocket(port, { origin: "http://evil.example" })).rejects.toMatchObject({ status: 403 });
    await expect(rawSocket(port, { origin: "null" })).rejects.toMatchObject({ status: 403 });
    const own = await rawSocket(port, { origin: `http://127.0.0.1:${port}` });
    own.send(req("1", "connect", {}));
    expect(await own.next((f) => f.id === "1")).toMatchObject({ ok: true });
    own.close();
    const cli = await rawSocket(port);
    cli.send(req("1", "connect", {}));
    expect(await cli.next((f) => f.id === "1")).toMatchObject({ ok: true });
    cli.close();
  });

  it("refuses a no-cors text/plain POST from another page: no sub-agent starts", async () => {
    const gw = await start();
    const spawn = JSON.stringify({ tool: "sessions_spawn", args: { task: "exfiltrate" } });
    const crossSite = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { origin: "http://evil.example", "content-type": "text/plain" },
      body: spawn,
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN", message: expect.stringContaining("gateway.allowedOrigins") },
    });
    const crossSiteJson = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { origin: "http://evil.example", ...json },
      body: spawn,
    });
    expect(crossSiteJson.status).toBe(403);
    expect(gw.gateway.core.runs.recent(10)).toEqual([]);
  });

  it("accepts an origin listed in gateway.allowedOrigins", async () => {
    const gw = await start({ config: { gateway: { allowedOrigins: ["https://ui.example.com"] } } });
    const ws = await rawSocket(gw.gateway.port, { origin: "https://ui.example.com" });
    ws.send(req("1", "connect", {}));
    expect(await ws.next((f) => f.id === "1")).toMatchObject({ ok: true });
    ws.close();
    const post = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { origin: "https://ui.example.com", ...json },
      body: listBody,
    });
    expect(post.status).toBe(200);
  });
});

describe("Host check (DNS rebinding)", () => {
  it("refuses a non-loopback Host without a token on the page, the API and WebSocket upgrades", async () => {
    const gw = await start();
    const { port } = gw.gateway;
    const host = `rebind.example:${port}`;
    expect((await rawRequest(port, { headers: { host } })).status).toBe(403);
    expect(
      (await rawRequest(port, { method: "POST", path: "/tools/invoke", headers: { host, ...json }, body: listBody }))
        .status,
    ).toBe(403);
    // Same-origin for the browser (Origin matches Host) is still refused: the name is not loopback.
    await expect(rawSocket(port, { host, origin: `http://${host}` })).rejects.toMatchObject({ status: 403 });
    expect((await rawRequest(port, { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await rawRequest(port, { path: "/healthz", headers: { host } })).status).toBe(200);
  });

  it.each([
    ["user info hiding another host", (port: number) => `127.0.0.1:${port}@evil.com`],
    ["a path", (port: number) => `localhost:${port}/evil.com`],
    ["two names", () => "127.0.0.1 evil.com"],
    ["text after an IPv6 literal", (port: number) => `[::1]:${port}.evil.com`],
    ["a port that is not a number", () => "localhost:evil.com"],
  ])("refuses a Host with %s with 403 FORBIDDEN on the page, the API and WebSocket upgrades", async (_name, hostOf) => {
    const gw = await start();
    const { port } = gw.gateway;
    const host = hostOf(port);
    const page = await rawRequest(port, { headers: { host } });
    expect([page.status, page.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const api = await rawRequest(port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { host, ...json },
      body: listBody,
    });
    expect([api.status, api.body.error.code]).toEqual([403, "FORBIDDEN"]);
    await expect(rawSocket(port, { host })).rejects.toMatchObject({
      status: 403,
      body: { error: { code: "FORBIDDEN" } },
    });
    expect((await rawRequest(port, { headers: { host: `[::1]:${port}` } })).status).toBe(200);
  });

  it("accepts a Host listed in gateway.allowedHosts, and any Host once a token is set (the token guards)", async () => {
    const listed = await start({ config: { gateway: { allowedHosts: ["switchboard.lan"] } } });
    expect(
      (await rawRequest(listed.gateway.port, { headers: { host: `switchboard.lan:${listed.gateway.port}` } })).status,
    ).toBe(200);
    const token = "s3cret-token-0123456789";
    const guarded = await start({ token });
    const host = `gateway.example:${guarded.gateway.port}`;
    const noToken = await rawRequest(guarded.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { host, ...json },
      body: listBody,
    });
    expect(noToken.status).toBe(401);
    const withToken = await rawRequest(guarded.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { host, authorization: `bEaReR ${token}`, ...json },
      body: listBody,
    });
    expect(withToken.status).toBe(200);
  });
});

describe("JSON endpoints", () => {
  it("answer 415 to a body that is not application/json, and accept it with a charset", async () => {
    const gw = await start();
    const post = (headers: Record<string, string>) =>
      rawRequest(gw.gateway.port, { method: "POST", path: "/tools/invoke", headers, body: listBody });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const answer = await post({ "content-type": type });
      expect(answer.status).toBe(415);
      expect(answer.body).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    }
    expect((await post({})).status).toBe(415);
    expect((await post({ "content-type": "application/json; charset=utf-8" })).status).toBe(200);
  });

  it("answer 413 to a body over the limit", async () => {
    const gw = await start();
    const big = JSON.stringify({ tool: "sessions_list", args: {}, pad: "x".repeat(1024 * 1024 + 10) });
    const answer = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: json,
      body: big,
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({
      ok: false,
      error: { code: "INVALID_REQUEST", message: expect.stringContaining("larger than") },
    });
  });

  it("accept the Bearer scheme in any case", async () => {
    const token = "s3cret-token-0123456789";
    const gw = await start({ token });
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const answer = await rawRequest(gw.gateway.port, {
        method: "POST",
        path: "/tools/invoke",
        headers: { authorization: `${scheme} ${token}`, ...json },
        body: listBody,
      });
      expect(answer.status).toBe(200);
    }
    const wrong = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { authorization: `Basic ${token}`, ...json },
      body: listBody,
    });
    expect(wrong.status).toBe(401);
  });
});

describe("event subscriptions", () => {
  it("sends a session's events only to clients subscribed to it or to all", async () => {
    const gw = await start();
    const { port } = gw.gateway;
    const open = async (subscribe?: unknown) => {
      const ws = await rawSocket(port);
      ws.send(req("c", "connect", {}));
      await ws.next((f) => f.id === "c");
      if (subscribe) {
        ws.send(req("s", "subscribe", subscribe));
        expect(await ws.next((f) => f.id === "s")).toMatchObject({ ok: true });
      }
      return ws;
    };
    const none = await open();
    const other = await open({ sessionKeys: ["agent:main:webchat:dm:other"] });
    const mine = await open({ sessionKeys: ["agent:main:webchat:dm:mine"] });
    const operator = await open({ all: true });
    mine.send(req("1", "chat.send", { sessionKey: "agent:main:webchat:dm:mine", message: "private" }));
    const replyOf = (f: any) => f.type === "event" && f.event === "chat.delivery" && f.payload.kind === "reply";
    expect((await mine.next(replyOf)).payload).toMatchObject({
      sessionKey: "agent:main:webchat:dm:mine",
      text: "Echo: private",
    });
    expect((await operator.next(replyOf)).payload.text).toBe("Echo: private");
    // The run is over and every frame the gateway sent has arrived: no event can be on its way.
    await gw.gateway.core.idle();
    for (const ws of [none, other]) await ws.flush();
    expect(none.frames.filter((f) => f.type === "event")).toEqual([]);
    expect(other.frames.filter((f) => f.type === "event")).toEqual([]);
    // An empty list stops events again.
    mine.send(req("off", "subscribe", { sessionKeys: [] }));
    await mine.next((f) => f.id === "off");
    const seen = mine.frames.length;
    mine.send(req("2", "chat.send", { sessionKey: "agent:main:webchat:dm:mine", message: "again" }));
    await operator.next((f) => f.event === "chat.delivery" && f.payload.text === "Echo: again");
    await gw.gateway.core.idle();
    await mine.flush();
    expect(mine.frames.slice(seen).filter((f) => f.type === "event")).toEqual([]);
    for (const ws of [none, other, mine, operator]) ws.close();
  });

  it("refuses subscribe with neither or both of sessionKeys and all", async () => {
    const client = await (await start()).client();
    await expect(client.call("subscribe", {})).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(client.call("subscribe", { all: true, sessionKeys: ["main"] })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
    });
    expect(await client.call("subscribe", { sessionKeys: ["main"] })).toEqual({
      all: false,
      sessionKeys: ["agent:main:main"],
    });
  });
});

describe("web chat page", () => {
  it("connects from its own origin, loads history, subscribes to its session and chats", async () => {
    const gw = await start();
    const { port } = gw.gateway;
    const origin = `http://127.0.0.1:${port}`;
    const page = await rawRequest(port, { headers: { host: `127.0.0.1:${port}` } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('src="/ui/app.js"');
    const ws = await rawSocket(port, { origin, host: `127.0.0.1:${port}` });
    ws.send(req("1", "connect", {}));
    await ws.next((f) => f.id === "1");
    ws.send(req("2", "chat.history", { sessionKey: "main", limit: 100 }));
    expect(await ws.next((f) => f.id === "2")).toMatchObject({ ok: true, payload: { sessionKey: "agent:main:main" } });
    ws.send(req("3", "subscribe", { sessionKeys: ["agent:main:main"] }));
    await ws.next((f) => f.id === "3");
    ws.send(req("4", "chat.send", { sessionKey: "main", message: "hello page" }));
    expect((await ws.next((f) => f.event === "chat.delivery" && f.payload.kind === "reply")).payload.text).toBe(
      "Echo: hello page",
    );
    ws.close();
  });
});

describe("remote clients", () => {
  const lan = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i?.family === "IPv4" && !i.internal)?.address;

  it.skipIf(!lan)("need the token on a non-loopback bind: WebSocket connect and POST /tools/invoke", async () => {
    const token = "s3cret-token-0123456789";
    const gw = await start({ token, config: { gateway: { bind: lan } } });
    const url = `ws://${lan}:${gw.gateway.port}`;
    await expect(connectGateway(url)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const client = await connectGateway(url, token);
    expect(await client.call("agents.list")).toMatchObject({ agents: [{ id: "main" }] });
    await client.close();
    const post = (auth?: string) =>
      fetch(`http://${lan}:${gw.gateway.port}/tools/invoke`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(auth && { authorization: `Bearer ${auth}` }) },
        body: listBody,
      });
    expect((await post()).status).toBe(401);
    expect((await post(token)).status).toBe(200);
  });
});
