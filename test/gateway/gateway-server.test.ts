import { describe, expect, it } from "vitest";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { rawRequest } from "../support/raw-gateway.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

describe("listenGateway", () => {
  it("answers a request whose handler throws with a structured 500, logs the whole error and keeps serving", async () => {
    const broken = Object.assign(createFakeChannelAdapter({ id: "telegram" }), {
      handleHttp: async () => {
        throw new Error("webhook handler exploded");
      },
    });
    const gw = await start({ adapters: [broken] });
    const answer = await rawRequest(gw.gateway.port, {
      method: "POST",
      path: "/telegram-webhook",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      ok: false,
      error: { code: "INTERNAL", message: expect.stringContaining("see its log") },
    });
    const logged = gw.logger.records.find((r) => r.message === "http request failed");
    expect(logged?.fields.err).toBeInstanceOf(Error);
    expect((logged!.fields.err as Error).message).toBe("webhook handler exploded");
    expect((await rawRequest(gw.gateway.port, { path: "/healthz" })).body).toEqual({ ok: true });
  });

  it("answers malformed HTTP with 400 and keeps serving", async () => {
    const gw = await start();
    const net = await import("node:net");
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(gw.gateway.port, "127.0.0.1", () => socket.write("GARBAGE / NOPE\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await rawRequest(gw.gateway.port, { path: "/healthz" })).body).toEqual({ ok: true });
  });
});
