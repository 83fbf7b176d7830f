import { describe, expect, it } from "vitest";
import { clientAddress } from "../../src/hooks/client-address.js";
import { rawRequest } from "../support/raw-gateway.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const HOOK_TOKEN = "hook-token-0123456789";

describe("clientAddress", () => {
  it.each([
    ["the socket peer without a forwarded header", "203.0.113.7", undefined, [], "203.0.113.7"],
    ["an IPv4-mapped peer as plain IPv4", "::ffff:203.0.113.7", undefined, [], "203.0.113.7"],
    [
      "the peer when it is not a trusted proxy (anyone can write the header)",
      "203.0.113.7",
      "198.51.100.1",
      [],
      "203.0.113.7",
    ],
    ["the forwarded client behind a trusted proxy", "127.0.0.1", "198.51.100.1", ["127.0.0.1"], "198.51.100.1"],
    ["the mapped peer as a trusted proxy", "::ffff:127.0.0.1", "198.51.100.1", ["127.0.0.1"], "198.51.100.1"],
    [
      "the nearest untrusted hop, not a spoofed first one",
      "10.0.0.2",
      "6.6.6.6, 198.51.100.1, 10.0.0.1",
      ["10.0.0.1", "10.0.0.2"],
      "198.51.100.1",
    ],
    ["the first hop when every hop is trusted", "10.0.0.2", "10.0.0.1", ["10.0.0.1", "10.0.0.2"], "10.0.0.1"],
    ["the peer when the header holds no address", "127.0.0.1", "garbage, also garbage", ["127.0.0.1"], "127.0.0.1"],
    ["repeated headers read as one list", "127.0.0.1", ["198.51.100.1", "198.51.100.2"], ["127.0.0.1"], "198.51.100.2"],
  ])("names %s", (_name, peer, forwarded, trusted, expected) => {
    expect(clientAddress(peer, forwarded, trusted)).toBe(expected);
  });
});

describe("hook failures behind a reverse proxy", () => {
  const post = (port: number, forwardedFor: string, token: string) =>
    rawRequest(port, {
      method: "POST",
      path: "/hooks/wake",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${token}`,
        "x-forwarded-for": forwardedFor,
      },
      body: JSON.stringify({ text: "build done", deliver: false }),
    });

  it("counts each forwarded client apart, so one guesser behind the proxy does not lock out the real caller", async () => {
    const gw = await start({
      config: { hooks: { enabled: true, token: HOOK_TOKEN }, gateway: { trustedProxies: ["127.0.0.1"] } },
    });
    const { port } = gw.gateway;
    for (let i = 0; i < 5; i++) expect((await post(port, "203.0.113.5", "wrong-token")).status).toBe(401);
    expect((await post(port, "203.0.113.5", HOOK_TOKEN)).status).toBe(429);
    expect((await post(port, "198.51.100.7", HOOK_TOKEN)).status).toBe(202);
  });

  it("does not believe X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    const gw = await start({ config: { hooks: { enabled: true, token: HOOK_TOKEN } } });
    const { port } = gw.gateway;
    // A guesser cannot dodge the limit by writing a new address into the header each time.
    for (let i = 0; i < 5; i++) await post(port, `203.0.113.${i}`, "wrong-token");
    expect((await post(port, "198.51.100.7", HOOK_TOKEN)).status).toBe(429);
  });
});
