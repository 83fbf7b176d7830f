// Seeded, time-bounded fuzzing of the gateway's edges: whatever arrives, every answer is a
// structured error (or a result), and the gateway goes on answering /healthz and valid requests.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayErrorCodes } from "../../src/gateway/protocol.js";
import { type RawSocket, rawRequest, rawSocket, req } from "../support/raw-gateway.js";
import { type TestGateway, startTestGateway } from "../support/test-gateway.js";

const SEED = 20261123;
const CODES = Object.values(GatewayErrorCodes);
const HUGE = "x".repeat(4 * 1024 * 1024 + 1);
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.close();
});

const methods = fc.constantFrom(
  "connect",
  "sessions.list",
  "chat.history",
  "agent.wait",
  "tools.invoke",
  "subscribe",
  "status",
  "nope",
  "",
  "__proto__",
);
const frameArb = fc.oneof(
  { weight: 3, arbitrary: fc.string().map((s) => ({ text: s })) },
  { weight: 3, arbitrary: fc.json().map((s) => ({ text: s })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("null", "[]", "{}", '{"type":"req"}', "true", "1e308").map((s) => ({ text: s })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          type: fc.constantFrom("req", "res", 1),
          id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
          method: methods,
          params: fc.jsonValue(),
        },
        { requiredKeys: [] },
      )
      .map((f) => ({ text: JSON.stringify(f) })),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ binary: Buffer.from(bytes) })) },
);
const frames = fc.array(frameArb, { minLength: 1, maxLength: 6 });

function expectStructured(frame: any): void {
  expect(frame.type).toBe("res");
  if (frame.ok === false) {
    expect(CODES).toContain(frame.error.code);
    expect(typeof frame.error.message).toBe("string");
  }
}

async function validRequestWorks(): Promise<void> {
  const ws = await rawSocket(gw.gateway.port);
  ws.send(req("c", "connect", {}));
  ws.send(req("v", "agents.list"));
  expect(await ws.next((f) => f.id === "v")).toMatchObject({ ok: true });
  ws.close();
  expect((await rawRequest(gw.gateway.port, { path: "/healthz" })).body).toEqual({ ok: true });
}

async function sendAll(ws: RawSocket, batch: Array<{ text?: string; binary?: Buffer }>): Promise<void> {
  for (const frame of batch) {
    if (ws.socket.readyState !== ws.socket.OPEN) break;
    if (frame.binary) ws.send(frame.binary, true);
    else ws.send(frame.text!);
  }
  // Every answer to the batch has arrived (or the gateway closed the socket); each must be structured.
  await ws.flush();
}

describe("gateway WebSocket fuzz", () => {
  it("answers any frames before connect with structured errors and keeps serving", async () => {
    await fc.assert(
      fc.asyncProperty(frames, async (batch) => {
        const ws = await rawSocket(gw.gateway.port);
        await sendAll(ws, batch);
        ws.frames.forEach(expectStructured);
        ws.close();
      }),
      { seed: SEED, numRuns: 60, interruptAfterTimeLimit: 4_000 },
    );
    await validRequestWorks();
  }, 20_000);

  it("answers any frames after connect with structured errors, then still answers a valid request", async () => {
    await fc.assert(
      fc.asyncProperty(frames, fc.boolean(), async (batch, huge) => {
        const ws = await rawSocket(gw.gateway.port);
        ws.send(req("c", "connect", {}));
        await ws.next((f) => f.id === "c");
        await sendAll(ws, huge ? [...batch, { text: HUGE }] : batch);
        ws.frames.forEach(expectStructured);
        if (huge) expect((await ws.closed).code).toBe(1009);
        else {
          ws.send(req("after", "agents.list"));
          expect(await ws.next((f) => f.id === "after")).toMatchObject({ ok: true });
        }
        ws.close();
      }),
      { seed: SEED, numRuns: 40, interruptAfterTimeLimit: 4_000 },
    );
    await validRequestWorks();
  }, 20_000);
});

describe("gateway HTTP fuzz", () => {
  const bodies = fc.oneof(
    fc.string(),
    fc.json(),
    fc
      .record(
        {
          tool: fc.constantFrom("sessions_list", "sessions_history", "agents_list", "nope", ""),
          args: fc.jsonValue(),
          sessionKey: fc.string(),
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    fc.constant(HUGE),
  );
  const types = fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "",
    "application/x-www-form-urlencoded",
    "APPLICATION/JSON",
  );

  it("answers any body on POST /tools/invoke with a result or a structured error, and keeps serving", async () => {
    await fc.assert(
      fc.asyncProperty(bodies, types, async (body, type) => {
        const answer = await rawRequest(gw.gateway.port, {
          method: "POST",
          path: "/tools/invoke",
          headers: type ? { "content-type": type } : {},
          body,
        });
        expect([200, 400, 404, 413, 415]).toContain(answer.status);
        if (answer.status === 200) expect(answer.body.ok).toBe(true);
        else
          expect(answer.body).toMatchObject({
            ok: false,
            error: { code: expect.any(String), message: expect.any(String) },
          });
        if (answer.status !== 200) expect(CODES).toContain(answer.body.error.code);
      }),
      { seed: SEED, numRuns: 80, interruptAfterTimeLimit: 4_000 },
    );
    await validRequestWorks();
  }, 20_000);
});
