import path from "node:path";
import { describe, expect, it } from "vitest";
import { rawRequest, rawSocket, req } from "../support/raw-gateway.js";
import { tempHome, useTestGateways } from "../support/test-gateway.js";
import { useGatewayBinaries } from "../support/gateway-binary.js";

const start = useTestGateways();
const startBinary = useGatewayBinaries();

/** The gateway still answers /healthz and a valid request from a fresh client. */
async function stillServes(port: number): Promise<void> {
  expect((await rawRequest(port, { path: "/healthz" })).body).toEqual({ ok: true });
  const ws = await rawSocket(port);
  ws.send(req("c", "connect", {}));
  ws.send(req("a", "agents.list"));
  expect(await ws.next((f) => f.id === "a")).toMatchObject({ ok: true, payload: { agents: [{ id: "main" }] } });
  ws.close();
}

describe("attachClient", () => {
  it.each([
    ["null", "null"],
    ["a number", "42"],
    ["an array", "[1,2]"],
    ["a string", '"connect"'],
    ["not JSON", "{oops"],
  ])("answers a first frame of %s with a structured error and keeps serving", async (_name, frame) => {
    const gw = await start();
    const ws = await rawSocket(gw.gateway.port);
    ws.send(frame);
    expect(await ws.next()).toMatchObject({
      type: "res",
      ok: false,
      error: { code: expect.stringMatching(/INVALID_REQUEST|UNAUTHORIZED/), message: expect.any(String) },
    });
    ws.close();
    await stillServes(gw.gateway.port);
  });

  it("answers a request before connect with UNAUTHORIZED and closes the connection with 4401", async () => {
    const gw = await start();
    const ws = await rawSocket(gw.gateway.port);
    ws.send(req("1", "chat.history", { sessionKey: "main" }));
    expect(await ws.next()).toMatchObject({
      id: "1",
      ok: false,
      error: { code: "UNAUTHORIZED", message: "the first request must be connect" },
    });
    expect((await ws.closed).code).toBe(4401);
  });

  it("answers null, binary and wrong shapes after connect, on the same connection", async () => {
    const gw = await start();
    const ws = await rawSocket(gw.gateway.port);
    ws.send(req("c", "connect", {}));
    await ws.next((f) => f.id === "c");
    ws.send("null");
    ws.send(Buffer.from([0, 1, 2, 255]), true);
    ws.send(JSON.stringify({ type: "req", id: { nested: true }, method: "status" }));
    ws.send(req("x", "sessions.list", null));
    ws.send(req("ok", "agents.list"));
    await ws.next((f) => f.id === "ok");
    expect(await ws.next((f) => f.id === "x")).toMatchObject({ ok: true });
    const errors = ws.frames.filter((f) => f.ok === false).map((f) => f.error.code);
    expect(errors).toEqual(["INVALID_REQUEST", "INVALID_REQUEST", "INVALID_REQUEST"]);
    ws.close();
  });

  it("closes a connection that sends a frame over the payload limit with 1009 and logs it", async () => {
    const gw = await start();
    const ws = await rawSocket(gw.gateway.port);
    ws.send(req("c", "connect", {}));
    await ws.next((f) => f.id === "c");
    ws.send("x".repeat(5 * 1024 * 1024));
    expect((await ws.closed).code).toBe(1009);
    await stillServes(gw.gateway.port);
    expect(gw.logger.records.some((r) => r.message === "websocket client error" && r.fields.err instanceof Error)).toBe(
      true,
    );
  });
});

describe("gateway process", () => {
  it("survives an oversized frame and a null first frame, and keeps serving", async () => {
    const gw = await startBinary(await tempHome());
    const big = await rawSocket(gw.port);
    big.send("x".repeat(5 * 1024 * 1024));
    expect((await big.closed).code).toBe(1009);
    const nul = await rawSocket(gw.port);
    nul.send("null");
    expect(await nul.next()).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    nul.close();
    await nul.closed; // the gateway answered the close: it has handled it
    await stillServes(gw.port);
    expect(gw.exited()).toBe(false);
  }, 60_000);

  it("logs an unexpected rejection with its whole error and keeps serving", async () => {
    const stray = path.resolve(import.meta.dirname, "../fakes/stray-rejection.mjs");
    const gw = await startBinary(await tempHome(), {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${stray}`.trim(),
    });
    gw.child.kill("SIGUSR2");
    await expect.poll(() => gw.output()).toContain("stray rejection from the test");
    const line = gw
      .output()
      .split("\n")
      .find((l) => l.includes("stray rejection from the test"))!;
    // One JSON log line with the error's stack, not just its message.
    expect(JSON.parse(line)).toMatchObject({
      msg: "unhandled rejection",
      err: { message: "stray rejection from the test", stack: expect.stringContaining("stray-rejection.mjs") },
    });
    expect(gw.exited()).toBe(false);
    await stillServes(gw.port);
  }, 60_000);
});
