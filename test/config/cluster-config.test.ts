import { describe, expect, it } from "vitest";
import { processNodeId } from "../../src/cluster/node-id.js";
import { parseConfig } from "../../src/config/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import os from "node:os";
import { advertisedAddress, createGatewayCluster } from "../../src/gateway/core-cluster.js";

/** Every line a refused config reports. */
function problems(raw: unknown): string {
  try {
    parseConfig(raw);
  } catch (err) {
    return [(err as Error).message, ...((err as { details?: string[] }).details ?? [])].join("\n");
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe("cluster config", () => {
  it("fills the defaults: a 15 s lease renewed every 3 s, and no node id (one is generated)", () => {
    const { config } = parseConfig({});
    expect(config.cluster).toEqual({ leaseTtlMs: 15_000, heartbeatMs: 3_000, owners: "one" });
    expect(config.gateway.nodeId).toBeUndefined();
  });

  it("generates a node id once per process, and takes gateway.nodeId when set", () => {
    const { config } = parseConfig({});
    const logger = createMemoryLogger();
    const generated = createGatewayCluster({ config, logger, port: 0 }).nodeId;
    expect(generated).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{8}$/);
    expect(createGatewayCluster({ config, logger, port: 0 }).nodeId).toBe(generated);
    expect(processNodeId()).toBe(generated);
    const named = parseConfig({ gateway: { nodeId: "gw-east-1" } }).config;
    expect(createGatewayCluster({ config: named, logger, port: 0 }).nodeId).toBe("gw-east-1");
  });

  it.each([
    [{ cluster: { leaseTtlMs: 999 } }, "cluster.leaseTtlMs: must be at least 1000"],
    [{ cluster: { heartbeatMs: 199 } }, "cluster.heartbeatMs: must be at least 200"],
    [
      { cluster: { leaseTtlMs: 6_000, heartbeatMs: 3_000 } },
      "cluster.heartbeatMs: must be at most a third of cluster.leaseTtlMs (6000): set cluster.heartbeatMs to 2000 or less, or raise cluster.leaseTtlMs",
    ],
    [{ cluster: { leaseTTL: 5_000 } }, "cluster.leaseTTL"],
    [{ gateway: { nodeId: "has space" } }, 'gateway.nodeId: must be letters, digits, ".", "_" or "-"'],
    [
      { cluster: { advertiseHost: "gw1:8080" } },
      "cluster.advertiseHost: a host name or an IP address, without a port or scheme",
    ],
    [
      { cluster: { advertiseHost: "http://gw1" } },
      "cluster.advertiseHost: a host name or an IP address, without a port or scheme",
    ],
  ])("refuses %j naming the path and the fix", (raw, message) => {
    expect(problems(raw)).toContain(message);
  });

  it('takes cluster.owners "many" on PostgreSQL, and refuses it on the local backend or misspelt, naming the fix; takes WhatsApp', () => {
    const postgres = { backend: "postgres", postgres: { url: "postgres://u:p@localhost/db" } };
    expect(parseConfig({ state: postgres, cluster: { owners: "many" } }).config.cluster.owners).toBe("many");
    expect(problems({ cluster: { owners: "many" } })).toContain(
      'cluster.owners: "many" needs state.backend "postgres" (gateways share partitions of one schema): set state.backend to "postgres", or cluster.owners to "one"',
    );
    // WhatsApp runs in many mode: partition cores send through the account's holder (docs/whatsapp.md).
    const withWhatsApp = { state: postgres, cluster: { owners: "many" }, channels: { whatsapp: {} } };
    expect(parseConfig(withWhatsApp).config.channels.whatsapp).toBeDefined();
    expect(problems({ state: postgres, cluster: { owners: "all" } })).toContain(
      'cluster.owners: must be one of "one", "many"',
    );
  });

  it('takes cluster.owners "many" with DM pairing on a channel and an account (the global holder decides access)', () => {
    const postgres = { backend: "postgres", postgres: { url: "postgres://u:p@localhost/db" } };
    const many = { state: postgres, cluster: { owners: "many" } };
    const accounts = { work: { botToken: "456:def", dmPolicy: "pairing" } };
    const telegram = { botToken: "123:abc", dmPolicy: "pairing", accounts };
    expect(parseConfig({ ...many, channels: { telegram } }).config.cluster.owners).toBe("many");
  });

  it("takes the minimums", () => {
    const { config } = parseConfig({ cluster: { leaseTtlMs: 1_000, heartbeatMs: 200 } });
    expect(config.cluster).toEqual({ leaseTtlMs: 1_000, heartbeatMs: 200, owners: "one" });
  });

  it("advertises where peers reach a gateway: cluster.advertiseHost, else a specific bind address, else the host name", () => {
    const at = (raw: object) => advertisedAddress(parseConfig(raw).config, 18789);
    expect(at({})).toBe("127.0.0.1:18789");
    expect(at({ gateway: { bind: "10.0.0.7", auth: { token: "a-long-enough-token-1" } } })).toBe("10.0.0.7:18789");
    expect(at({ gateway: { bind: "0.0.0.0", auth: { token: "a-long-enough-token-1" } } })).toBe(
      `${os.hostname()}:18789`,
    );
    expect(at({ gateway: { bind: "::", auth: { token: "a-long-enough-token-1" } } })).toBe(`${os.hostname()}:18789`);
    expect(at({ gateway: { bind: "::1" } })).toBe("[::1]:18789");
    expect(
      at({
        cluster: { advertiseHost: "gw-east.internal" },
        gateway: { bind: "0.0.0.0", auth: { token: "a-long-enough-token-1" } },
      }),
    ).toBe("gw-east.internal:18789");
  });
});
