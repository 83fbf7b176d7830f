// `switchboard cluster status` and the gateway method `cluster.status`: the members of a schema as
// the database lists them, with or without a gateway running; the local backend says it is single-gateway.
import os from "node:os";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LOCAL_CLUSTER_NOTE } from "../../src/cluster/cluster-status.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { useTestGateways } from "../support/test-gateway.js";

const db = usePostgres();
const start = useTestGateways();

/** A home whose config puts the state on `schema` (the url from the env, as a user would). */
async function homeOn(schema: string): Promise<string> {
  const dir = await tempHome();
  const config = { gateway: { port: 1 }, state: { backend: "postgres", postgres: { schema } } };
  await writeFile(path.join(dir, "switchboard.json5"), JSON.stringify(config));
  return dir;
}

describe("cluster status", () => {
  it("says the local backend is single-gateway, from the CLI and from a gateway", async () => {
    const home = await tempHome();
    const text = await cli(["cluster", "status"], { home });
    expect([text.code, text.stdout.trim()]).toEqual([0, LOCAL_CLUSTER_NOTE]);
    const json = await cli(["cluster", "status", "--json"], { home });
    expect(JSON.parse(json.stdout)).toEqual({ backend: "local", note: LOCAL_CLUSTER_NOTE });
    const gw = await start();
    const client = await gw.client();
    expect(await client.call("cluster.status")).toEqual({ backend: "local", note: LOCAL_CLUSTER_NOTE });
  });

  it("lists no member on a schema no gateway has joined", async () => {
    const home = await homeOn(freshSchema());
    const { code, stdout } = await cli(["cluster", "status", "--json"], {
      home,
      env: { SWITCHBOARD_DATABASE_URL: db.url },
    });
    expect([code, JSON.parse(stdout)]).toEqual([0, { backend: "postgres", members: [] }]);
  });

  it("lists a running gateway (node, role, address, host, pid, port, heartbeat, sessions, writer lease) as the method does, and nothing once it stopped", async () => {
    const schema = freshSchema();
    const home = await homeOn(schema);
    const env = { SWITCHBOARD_DATABASE_URL: db.url };
    const gw = await start({
      config: { gateway: { nodeId: "gw-status" }, state: { backend: "postgres", postgres: { url: db.url, schema } } },
    });
    const client = await gw.client();
    // One session: the owner's, counted by the method and listed by key with --json.
    await client.call("chat.send", { sessionKey: "main", message: "hello" });
    type Status = { members: Array<{ sessionsOwned: number; sessionKeys?: string[] }> };
    const status = async () => (await client.call("cluster.status")) as Status;
    await expect.poll(async () => (await status()).members[0]?.sessionsOwned).toBe(1);
    const fromGateway = await status();
    const member = {
      nodeId: "gw-status",
      incarnation: expect.stringMatching(/^gw-status~[0-9a-f]{8}$/),
      role: "owner",
      address: `127.0.0.1:${gw.gateway.port}`,
      host: os.hostname(),
      pid: process.pid,
      port: gw.gateway.port,
      alive: true,
      sessionsOwned: 1,
      accounts: [],
      leases: [expect.objectContaining({ name: "schema:writer", fence: 1 })],
    };
    expect(fromGateway).toEqual({ backend: "postgres", members: [expect.objectContaining(member)] });
    expect(fromGateway.members[0]!.sessionKeys).toBeUndefined();
    const json = await cli(["cluster", "status", "--json"], { home, env });
    expect(JSON.parse(json.stdout)).toEqual({
      backend: "postgres",
      members: [expect.objectContaining({ ...member, sessionKeys: ["agent:main:main"] })],
    });
    const text = await cli(["cluster", "status"], { home, env });
    expect(text.stdout).toMatch(/: 1 member\(s\)\n/);
    expect(text.stdout).toMatch(
      new RegExp(
        `^gw-status~[0-9a-f]{8}  owner at 127\\.0\\.0\\.1:${gw.gateway.port}  ${os.hostname()} pid ${process.pid} port ${gw.gateway.port}  alive  heartbeat \\d+\\.\\ds ago  sessions 1  partitions 256  accounts -  leases schema:writer@1$`,
        "m",
      ),
    );
    await gw.close();
    const after = await cli(["cluster", "status", "--json"], { home, env });
    expect(JSON.parse(after.stdout)).toEqual({ backend: "postgres", members: [] });
  });
});
