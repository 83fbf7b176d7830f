import { describe, expect, it } from "vitest";
import { clientAddress } from "../../src/hooks/client-address.js";

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
