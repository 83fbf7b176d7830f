// The owner a standby relays to (src/gateway/core-cluster.ts `owner()`): the other gateway holding
// `schema:writer`, never this one. A gateway that holds the lease while it still serves as a standby
// (its core opens) must find no owner, or its relay would send every request to itself in a loop.
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createGatewayCluster } from "../../src/gateway/core-cluster.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway's cluster `nodeId` on `schema`, listening (as it says) on `port`. */
async function member(schema: string, nodeId: string, port: number) {
  const logger = createMemoryLogger();
  const database: PostgresDatabase = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  const stop = new AbortController();
  const { config } = parseConfig({ gateway: { nodeId }, cluster: { leaseTtlMs: 60_000, heartbeatMs: 20_000 } });
  const cluster = createGatewayCluster({ config, logger, port, signal: stop.signal, onFencedOut: () => undefined });
  return { cluster, database, stop };
}

describe("GatewayCluster.owner()", () => {
  it("is undefined for the gateway that holds schema:writer, and names it to the standby waiting for it", async () => {
    const schema = freshSchema();
    const owner = await member(schema, "gw-a", 4101);
    const fenced = await owner.cluster.guard(owner.database);
    cleanups.push(() => fenced.close());
    expect(await owner.cluster.owner()).toBeUndefined();

    const standby = await member(schema, "gw-b", 4102);
    const waiting = standby.cluster.guard(standby.database).catch((err: Error) => err);
    cleanups.push(async () => {
      standby.stop.abort();
      await waiting;
      await standby.database.close();
    });
    await until(async () => (await standby.cluster.owner()) !== undefined);
    expect(await standby.cluster.owner()).toEqual({ nodeId: "gw-a", address: "127.0.0.1:4101" });
  });
});
