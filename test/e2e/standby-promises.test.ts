// Promises of docs/scale-out.md about a pair of real gateway processes on one PostgreSQL schema
// (test/support/cluster-harness.ts: the real Telegram adapter on a fake Bot API, token-less on
// loopback): a clean stop releases the owner's account leases, so the standby takes the account at
// once, not at the TTL; a standby refuses a foreign Host itself (DNS rebinding) and the owner does
// not skip its Host check for a request without the relay secret; `/stop` sent through a standby
// stops a turn running on the owner.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { readClusterStatus } from "../../src/cluster/cluster-status.js";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { STRINGS } from "../../src/commands/command-strings.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import { useCluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import { testPool, usePostgres } from "../support/postgres.js";
import { rawRequest, rawSocket } from "../support/raw-gateway.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
  for (const pool of pools.splice(0)) await pool.end();
});

/** A 60 s TTL: a takeover well within it came from a release (or the liveness lock), never from expiry. */
const CLUSTER = { leaseTtlMs: 60_000, heartbeatMs: 3_000 };

/** An owner and a standby on the fake Bot API, playing `rules`. */
async function pair(rules: PlaybookRule[] = []) {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  const cluster = await startCluster({
    size: 2,
    cluster: CLUSTER,
    env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(rules), SB_LOG_LEVEL: "info" },
  });
  const owner = await cluster.owner();
  const standby = cluster.gateways.find((g) => g !== owner)!;
  return { fake, cluster, owner, standby };
}

describe("a standby and its owner", () => {
  it("releases the owner's account leases at a clean stop: the standby takes account:telegram:default at once, not at the TTL", async () => {
    const { cluster, owner, standby } = await pair();
    const pool = testPool({ connectionString: db.url, options: `-c search_path=${cluster.schema}`, max: 1 });
    pools.push(pool);
    // What `cluster status --json` prints (src/cli reads the same function).
    const members = async () => (await readClusterStatus(pool)).members;
    expect((await members()).map((m) => [m.nodeId, m.role, m.accounts])).toEqual([
      [owner.name, "owner", ["telegram:default"]],
      [standby.name, "standby", []],
    ]);
    owner.process.kill("SIGTERM");
    expect(await owner.exited).toEqual({ code: 0, signal: null });
    const stoppedAt = Date.now();
    await cluster.owner({ not: owner });
    await until(
      async () => (await members()).some((m) => m.accounts.includes("telegram:default") && m.nodeId === standby.name),
      30_000,
    );
    const tookMs = Date.now() - stoppedAt;
    expect(tookMs, `the standby held the account ${tookMs} ms after the owner's clean stop`).toBeLessThan(
      CLUSTER.leaseTtlMs / 2,
    );
    expect(
      (await members()).map((m) => [m.nodeId, m.role, m.accounts, m.leases.map((l) => [l.name, l.fence])]),
    ).toEqual([
      [
        standby.name,
        "owner",
        ["telegram:default"],
        [
          ["account:telegram:default", 2],
          ["schema:writer", 2],
        ],
      ],
    ]);
    process.stderr.write(
      `standby promises: account taken ${tookMs} ms after a clean stop (TTL ${CLUSTER.leaseTtlMs})\n`,
    );
  }, 120_000);

  it("refuses a foreign Host at the standby itself (DNS rebinding); the owner skips its Host check only with the relay secret", async () => {
    const { owner, standby } = await pair();
    const invoke = (port: number, headers: Record<string, string>) =>
      rawRequest(port, {
        method: "POST",
        path: "/tools/invoke",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ tool: "sessions_list", args: {} }),
      });
    // Loopback Host: relayed and answered by the owner.
    expect((await invoke(standby.port, {})).status).toBe(200);
    const rebound = await invoke(standby.port, { host: "evil.example" });
    expect([rebound.status, rebound.body.error?.code]).toEqual([403, "FORBIDDEN"]);
    // Refused by the standby itself (its log says so), before anything was relayed.
    await until(() => /"host":"evil.example".*"msg":"http request refused"/.test(standby.stderr()));
    const upgrade = await rawSocket(standby.port, { host: "evil.example" }).catch((err: { status?: number }) => err);
    expect(upgrade).toMatchObject({ status: 403 });
    // Straight to the owner, with a forged relay header: an ordinary request, its Host checked.
    const forged: Array<Record<string, string>> = [
      { host: "evil.example" },
      { host: "evil.example", "x-switchboard-relay": "0".repeat(64) },
    ];
    for (const headers of forged) {
      const direct = await invoke(owner.port, headers);
      expect([direct.status, direct.body.error?.code]).toEqual([403, "FORBIDDEN"]);
    }
  }, 120_000);

  it("stops a turn running on the owner when /stop is sent through the standby's WebSocket", async () => {
    const slow = [{ when: "think slowly", first: { text: "too late", delayMs: 30_000 } }];
    const { standby } = await pair(slow);
    const client = await connectGateway(`ws://127.0.0.1:${standby.port}`);
    try {
      const { runId } = await client.call<{ runId: string }>("chat.send", { message: "think slowly" });
      await expect
        .poll(async () => (await client.call<{ status: string }>("agent.wait", { runId, timeoutMs: 0 })).status)
        .toBe("timeout");
      expect(await client.call("chat.send", { message: "/stop" })).toMatchObject({
        status: "command",
        reply: STRINGS.aborted,
      });
      expect(await client.call("agent.wait", { runId, timeoutMs: 10_000 })).toMatchObject({ status: "aborted" });
    } finally {
      await client.close();
    }
  }, 120_000);
});
