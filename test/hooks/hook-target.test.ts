// A webhook's `to` must name a channel the gateway runs: the reply is delivered now, not after a later setup.
import { afterEach, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../support/test-gateway.js";

const TOKEN = "hook-token-0123456789";
const gateways: TestGateway[] = [];
afterEach(async () => {
  for (const gw of gateways.splice(0)) await gw.close();
});

describe("POST /hooks/agent to a channel the gateway does not run", () => {
  it("answers 400 naming the field and the fix, and runs nothing", async () => {
    const gw = await startTestGateway({ config: { hooks: { enabled: true, token: TOKEN } } });
    gateways.push(gw);
    const response = await fetch(`${gw.gateway.url.replace(/^ws/, "http")}/hooks/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ message: "CI failed", to: "telegram:abc" }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { field: string; message: string } };
    expect(body.error.field).toBe("to");
    expect(body.error.message).toContain('"telegram:abc" names telegram, which this gateway does not run');
    const client = await gw.client();
    expect((await client.call<{ sessions: unknown[] }>("sessions.list", {})).sessions).toEqual([]);
  });
});
