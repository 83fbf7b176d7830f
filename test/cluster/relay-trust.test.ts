import type http from "node:http";
import { describe, expect, it } from "vitest";
import { acceptRelayed, relayedClient } from "../../src/cluster/relay-trust.js";
import { originRefusal, refusalOf } from "../../src/gateway/request-guard.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { requestClient } from "../../src/hooks/client-address.js";

const SECRET = "a".repeat(64);

/** A request as the owner's server sees it: from `peer` (the standby's socket), with `headers`. */
function request(headers: Record<string, string>, peer = "10.0.0.2"): http.IncomingMessage {
  return { headers: { ...headers }, socket: { remoteAddress: peer } } as unknown as http.IncomingMessage;
}

describe("acceptRelayed", () => {
  it("trusts a request carrying the relay secret: its client is the address x-forwarded-for names, and the header is gone", () => {
    const req = request({ "x-switchboard-relay": SECRET, "x-forwarded-for": "203.0.113.7" });
    acceptRelayed(req, SECRET);
    expect(relayedClient(req)).toBe("203.0.113.7");
    expect(req.headers["x-switchboard-relay"]).toBeUndefined();
  });

  it.each([
    ["a wrong secret", { "x-switchboard-relay": "b".repeat(64) }, SECRET],
    ["a shorter secret", { "x-switchboard-relay": "a" }, SECRET],
    ["no secret header", {}, SECRET],
    ["a gateway that has no secret (local backend)", { "x-switchboard-relay": SECRET }, undefined],
  ])("treats a request with %s as an ordinary one", (_case, headers, secret) => {
    const req = request({ ...headers, "x-forwarded-for": "203.0.113.7", origin: "https://evil.example" });
    acceptRelayed(req, secret);
    expect(relayedClient(req)).toBeUndefined();
    expect(req.headers["x-switchboard-relay"]).toBeUndefined();
    // Its forged x-forwarded-for names nobody: the socket's peer is the client; its Origin is checked.
    expect(requestClient(req, [])).toBe("10.0.0.2");
    expect(originRefusal(req, [])).toMatch(/gateway.allowedOrigins/);
  });

  it("takes the last hop a standby appended, and the socket's peer when that is not an address", () => {
    const chained = request({ "x-switchboard-relay": SECRET, "x-forwarded-for": "198.51.100.1, 203.0.113.7" });
    acceptRelayed(chained, SECRET);
    expect(relayedClient(chained)).toBe("203.0.113.7");
    const garbled = request({ "x-switchboard-relay": SECRET, "x-forwarded-for": "not-an-address" });
    acceptRelayed(garbled, SECRET);
    expect(relayedClient(garbled)).toBe("10.0.0.2");
  });
});

describe("a trusted relayed request on the owner", () => {
  const relayed = (headers: Record<string, string>) => {
    const req = request({ "x-switchboard-relay": SECRET, "x-forwarded-for": "203.0.113.7", ...headers });
    acceptRelayed(req, SECRET);
    return req;
  };

  it("counts failed tokens against the original client, not the standby", () => {
    const guard = createTokenGuard({ token: "t0ken-0123456789", trustedProxies: [], now: () => 0 });
    const req = relayed({});
    expect(guard.clientOf(req)).toBe("203.0.113.7");
    expect(requestClient(req, [])).toBe("203.0.113.7");
  });

  it("skips the Origin and Host checks the standby already made", () => {
    const req = relayed({ origin: "https://ui.example.com", host: "gateway.example.com" });
    expect(originRefusal(req, [])).toBeUndefined();
    expect(refusalOf(req, { allowedOrigins: [], allowedHosts: [] })).toBeUndefined();
    const direct = request({ origin: "https://ui.example.com", host: "gateway.example.com" });
    expect(refusalOf(direct, { allowedOrigins: [], allowedHosts: [] })).toMatch(/not a loopback name/);
  });
});
