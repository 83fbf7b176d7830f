// Two gateways on one PostgreSQL schema, each a real process with the real Telegram adapter on one
// fake Bot API (docs/scale-out.md "Standbys"): the first owns the schema and polls the bot; the
// second is a standby (its /healthz says so and names the owner) that polls nothing. The owner dies
// by SIGKILL after storing a DM and before answering it; the standby owns the schema within 2 s,
// takes the Telegram account and answers that DM exactly once.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { readClusterStatus } from "../../src/cluster/cluster-status.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, testPool, usePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
  for (const pool of pools.splice(0)) await pool.end();
});

/** The env of a gateway process `nodeId` on `schema` with the fake's bot; a 60 s TTL, so a fast takeover came from the liveness lock. */
async function gatewayEnv(
  fake: FakeTelegramServer,
  schema: string,
  nodeId: string,
  extra: Record<string, string> = {},
) {
  return {
    SB_HOME: await tempHome(),
    SB_API_ROOT: fake.apiRoot,
    SB_STATE: JSON.stringify({ backend: "postgres", postgres: { url: db.url, schema } }),
    SB_CONFIG: JSON.stringify({ gateway: { nodeId }, cluster: { leaseTtlMs: 60_000, heartbeatMs: 3_000 } }),
    ...extra,
  };
}

const portOf = (url: string) => Number(new URL(url).port);
const healthz = async (port: number) => (await rawRequest(port, { path: "/healthz" })).body;

describe("a standby gateway", () => {
  it("owns the schema within 2 s of a SIGKILL of the owner and answers once a DM the owner stored but had not answered", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const schema = freshSchema();
    // The owner dies at its first turn's reply commit: the DM is stored, its answer is not.
    const dying = { SB_KILL_AT_TURN_COMMIT: JSON.stringify({ n: 1, at: "send" }) };
    const owner = await start("platform-gateway-process.ts", await gatewayEnv(fake, schema, "gw-a", dying));
    const standby = await start("platform-gateway-process.ts", await gatewayEnv(fake, schema, "gw-b"));
    const [ownerPort, standbyPort] = [portOf(owner.url), portOf(standby.url)];
    expect(await healthz(standbyPort)).toEqual({
      status: "ok",
      role: "standby",
      owner: { nodeId: "gw-a", address: `127.0.0.1:${ownerPort}` },
    });
    const pool = testPool({ connectionString: db.url, options: `-c search_path=${schema}` });
    pools.push(pool);
    const roles = async () =>
      (await readClusterStatus(pool)).members.map((m) => [m.nodeId, m.role, m.alive, m.accounts]);
    expect(await roles()).toEqual([
      ["gw-a", "owner", true, ["telegram:default"]],
      ["gw-b", "standby", true, []],
    ]);

    const exited = new Promise<number>((resolve) => owner.process.once("exit", () => resolve(Date.now())));
    fake.push(adaDm("answer me once", 1));
    const killedAt = await exited;
    expect(owner.process.signalCode).toBe("SIGKILL");
    expect(fake.sent.map((s) => s.text)).toEqual([]);
    await until(async () => (await healthz(standbyPort)).ok === true, 10_000);
    const tookOverMs = Date.now() - killedAt;
    expect(tookOverMs, `the standby owned the schema ${tookOverMs} ms after the SIGKILL`).toBeLessThan(2_000);

    await until(() => fake.sent.some((s) => s.text === "Echo: answer me once"), 30_000);
    await fake.flush();
    await standby.idle();
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: answer me once"]);
    const after = await readClusterStatus(pool);
    expect(
      after.members.map((m) => [m.nodeId, m.role, m.alive, m.accounts, m.leases.map((l) => [l.name, l.fence])]),
    ).toEqual([
      ["gw-a", "standby", false, [], []],
      [
        "gw-b",
        "owner",
        true,
        ["telegram:default"],
        [
          ["account:telegram:default", 2],
          ["schema:writer", 2],
        ],
      ],
    ]);
  }, 120_000);
});
