import { describe, expect, it } from "vitest";
import { relayRequestHeaders, relayResponseHeaders } from "../../src/gateway/relay-headers.js";

describe("relayRequestHeaders", () => {
  it("forwards end-to-end headers, drops hop-by-hop ones and those Connection names, and names the client once", () => {
    const headers = relayRequestHeaders(
      {
        host: "gw.example.com",
        origin: "https://gw.example.com",
        "content-type": "application/json",
        "content-length": "12",
        authorization: "Bearer abc",
        connection: "keep-alive, x-hop",
        "keep-alive": "timeout=5",
        "x-hop": "1",
        "transfer-encoding": "chunked",
        te: "trailers",
        upgrade: "h2c",
        "proxy-authorization": "Basic x",
        expect: "100-continue",
        "x-forwarded-for": "198.51.100.9",
        "x-switchboard-relay": "forged-by-the-client",
      },
      { secret: "the-secret", client: "203.0.113.7" },
    );
    expect(headers).toEqual({
      host: "gw.example.com",
      origin: "https://gw.example.com",
      "content-type": "application/json",
      "content-length": "12",
      authorization: "Bearer abc",
      "x-forwarded-for": "203.0.113.7",
      "x-switchboard-relay": "the-secret",
    });
  });
});

describe("relayResponseHeaders", () => {
  it("gives the owner's headers back without its connection's", () => {
    expect(
      relayResponseHeaders({
        "content-type": "application/json",
        "retry-after": "1",
        "set-cookie": ["a=1", "b=2"],
        connection: "close",
        "transfer-encoding": "chunked",
      }),
    ).toEqual({ "content-type": "application/json", "retry-after": "1", "set-cookie": ["a=1", "b=2"] });
  });
});
