// The gateway's answer to a body over the limit (src/gateway/http-routes.ts) for a client that is
// still sending when the 413 comes, as a standby's relay streaming a body is
// (test/gateway/owner-relay.test.ts): it must be able to finish its body and go on using the
// connection. A gateway that closed the connection after its 413 reset such a client, and the
// relay, reset before it read the 413, answered 503 instead.
import http from "node:http";
import { describe, expect, it } from "vitest";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const LIMIT = 1024 * 1024;

/** The status and JSON body of `request`'s answer; rejects when its connection fails first. */
function answerOf(
  request: http.ClientRequest,
): Promise<{ status: number; body: unknown; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    request.once("error", reject);
    request.once("response", (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers }));
      res.once("error", reject);
    });
  });
}

/** Resolves once `data` is handed to the connection; rejects when the connection was reset. */
const write = (request: http.ClientRequest, data: Buffer) =>
  new Promise<void>((resolve, reject) => request.write(data, (err) => (err ? reject(err) : resolve())));

const post = (port: number, agent: http.Agent, headers: http.OutgoingHttpHeaders = {}) =>
  http.request({
    host: "127.0.0.1",
    port,
    agent,
    method: "POST",
    path: "/tools/invoke",
    headers: { "content-type": "application/json", ...headers },
  });

/** How a client sends 2 MiB: the part it sends before the 413 comes, and the rest it sends after reading it. */
const bodies = [
  { framing: "a declared Content-Length (answered on the header)", length: 2 * LIMIT, before: 64 * 1024 },
  { framing: "a chunked body (answered once past the limit)", length: undefined, before: LIMIT + 1 },
];

describe("handleHttp POST /tools/invoke over the body limit", () => {
  it.each(bodies)(
    "answers 413 to $framing and reads the rest: the client still sending is not reset and its next request on the same connection is answered",
    async ({ length, before }) => {
      const gw = await start();
      // One connection, kept: the next request goes on the same one.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const big = post(gw.gateway.port, agent, length === undefined ? {} : { "content-length": length });
        const refused = answerOf(big);
        await write(big, Buffer.alloc(before, "x"));
        expect(await refused).toMatchObject({ status: 413, body: { ok: false, error: { code: "INVALID_REQUEST" } } });
        // Still sending when the 413 came: the rest goes on the same connection, then one more request.
        const sent = new Promise((resolve, reject) => {
          big.once("error", reject).once("finish", resolve);
          big.once("close", () => reject(new Error("the gateway closed the connection before the body was sent")));
        });
        big.end(Buffer.alloc(2 * LIMIT - before, "x"));
        await sent;
        const small = post(gw.gateway.port, agent);
        const next = answerOf(small);
        small.end(JSON.stringify({ tool: "sessions_list", args: {} }));
        expect(await next).toMatchObject({ status: 200, body: { ok: true } });
        expect(small.reusedSocket).toBe(true);
      } finally {
        agent.destroy();
      }
    },
    30_000,
  );
});
