// A JSON body over the limit (src/hooks/read-json-body.ts): the rest is read and dropped, so a
// client still sending it (a chunked body, or a standby relaying one) reads the 413; destroying the
// request instead left every other such request on a keep-alive connection without an answer.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { readJsonBody } from "../../src/hooks/read-json-body.js";
import { rawRequest } from "../support/raw-gateway.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A server answering 413 when readJsonBody finds the body too large, 200 with the value otherwise. */
async function bodyServer(maxBytes: number): Promise<number> {
  const server = http.createServer(async (req, res) => {
    const body = await readJsonBody(req, maxBytes);
    res.writeHead("value" in body ? 200 : 413, { "content-type": "application/json" });
    res.end(JSON.stringify("value" in body ? { ok: true } : { ok: false, error: body }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

it("answers 413 to each of 10 chunked bodies over the limit sent whole, and then reads a good one", async () => {
  const port = await bodyServer(1024 * 1024);
  const headers = { "content-type": "application/json" };
  const big = JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) });
  for (let i = 0; i < 10; i++) {
    const answer = await rawRequest(port, { method: "POST", path: "/", headers, body: big });
    expect([answer.status, answer.body]).toMatchObject([413, { ok: false, error: { code: "TOO_LARGE" } }]);
  }
  const good = await rawRequest(port, { method: "POST", path: "/", headers, body: JSON.stringify({ a: 1 }) });
  expect([good.status, good.body]).toEqual([200, { ok: true }]);
}, 30_000);
