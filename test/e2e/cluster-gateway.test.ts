// Gateways on one PostgreSQL schema as a user runs them (`bin/switchboard gateway run`, built as
// `npm ci` builds it): the first owns the schema; a second listens as a standby naming it (its
// probes answer, the rest is relayed to the owner) and takes over at once when the owner is
// SIGKILLed (its liveness lock freed); a SIGSTOPped owner's place is taken at its lease TTL, and
// continued, it stops itself. `cluster status` reads it all from the database, with no gateway running.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildCli } from "../../bin/cli-build.mjs";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const ROOT = path.resolve(import.meta.dirname, "../..");
const built = path.join(ROOT, "node_modules", ".cache", `sb-cluster-cli-${process.pid}`);
beforeAll(() => buildCli(built, ROOT), 60_000);
afterAll(() => rm(built, { recursive: true, force: true }));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

interface Cli {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Runs the built CLI on `home` with the test database's url. */
function cli(home: string, args: string[]): Cli {
  const child = spawn(process.execPath, [path.join(built, "entry.js"), ...args], {
    env: { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_DATABASE_URL: db.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, output: () => output, exited };
}

/** A home whose gateway is `nodeId` on `schema` (`more`: other config sections). */
async function home(schema: string, nodeId: string, cluster?: object, more: object = {}): Promise<string> {
  const dir = await tempHome();
  await mkdir(dir, { recursive: true });
  const config = {
    ...more,
    state: { backend: "postgres", postgres: { schema } },
    gateway: { nodeId },
    ...(cluster && { cluster }),
  };
  await writeFile(path.join(dir, "switchboard.json5"), JSON.stringify(config));
  return dir;
}

/** Starts `gateway run` and waits for its listening line; returns it with its port. */
async function gateway(dir: string): Promise<Cli & { port: number }> {
  const run = cli(dir, ["gateway", "run", "--port", "0"]);
  await until(() => /listening on ws:\/\/[^:]+:\d+/.test(run.output()) || run.child.exitCode !== null, 30_000);
  const port = /listening on ws:\/\/[^:]+:(\d+)/.exec(run.output())?.[1];
  if (!port) throw new Error(`gateway did not start: ${run.output()}`);
  return { ...run, port: Number(port) };
}

interface StatusJson {
  backend: string;
  members: Array<{
    nodeId: string;
    pid: number;
    port: number;
    address: string | null;
    role: "owner" | "standby";
    alive: boolean;
    leases: Array<{ name: string; fence: number }>;
  }>;
}

/** `cluster status --json` from `dir`. */
async function clusterStatus(dir: string): Promise<StatusJson> {
  const run = cli(dir, ["cluster", "status", "--json"]);
  expect(await run.exited, run.output()).toBe(0);
  return JSON.parse(run.output()) as StatusJson;
}

describe("gateways on one PostgreSQL schema", () => {
  it("serves a second gateway as a standby naming the owner; after a SIGKILL of the owner it takes over at once", async () => {
    const schema = freshSchema();
    const cluster = { leaseTtlMs: 60_000, heartbeatMs: 3_000 }; // a takeover within the TTL came from the liveness lock
    const first = await gateway(await home(schema, "gw-first", cluster));
    const second = await gateway(await home(schema, "gw-second", cluster));
    const owner = { nodeId: "gw-first", address: `127.0.0.1:${first.port}` };
    expect(second.output()).toContain(
      `listening on ws://127.0.0.1:${second.port} as a standby: the owner is gw-first at ${owner.address}`,
    );
    expect((await rawRequest(second.port, { path: "/healthz" })).body).toEqual({
      status: "ok",
      role: "standby",
      owner,
    });
    expect((await rawRequest(second.port, { path: "/readyz" })).status).toBe(200);
    // What the standby does not serve itself it relays to the owner (src/gateway/owner-relay.ts, test/e2e/owner-relay.test.ts).
    const relayed = await rawRequest(second.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });
    expect([relayed.status, relayed.body.ok]).toEqual([200, true]);
    const reader = await home(schema, "reader");
    const running = await clusterStatus(reader);
    expect(running.members.map((m) => [m.nodeId, m.role, m.alive, m.port, m.address, m.leases])).toEqual([
      [
        "gw-first",
        "owner",
        true,
        first.port,
        owner.address,
        [expect.objectContaining({ name: "schema:writer", fence: 1 })],
      ],
      ["gw-second", "standby", true, second.port, `127.0.0.1:${second.port}`, []],
    ]);
    const killedAt = Date.now();
    first.child.kill("SIGKILL");
    await until(async () => (await rawRequest(second.port, { path: "/healthz" })).body.ok === true, 30_000);
    const tookOverMs = Date.now() - killedAt;
    expect(tookOverMs, `the standby owned the schema ${tookOverMs} ms after the SIGKILL`).toBeLessThan(
      cluster.leaseTtlMs,
    );
    const afterKill = await clusterStatus(reader);
    expect(afterKill.members.map((m) => [m.nodeId, m.role, m.alive, m.leases.map((l) => [l.name, l.fence])])).toEqual([
      ["gw-first", "standby", false, []],
      ["gw-second", "owner", true, [["schema:writer", 2]]],
    ]);
    // A clean stop leaves: its row goes and the lease is released for the next gateway.
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const stopped = await clusterStatus(reader);
    expect(stopped.members.map((m) => m.nodeId)).toEqual(["gw-first"]);
  }, 120_000);

  it("stops a standby cleanly, even with a request relayed to a SIGSTOPped owner (503): it leaves no member row and the owner runs on; /readyz follows whether the owner answers", async () => {
    const schema = freshSchema();
    const first = await gateway(await home(schema, "gw-owner"));
    const standby = await gateway(await home(schema, "gw-standby"));
    // Ready while the owner answers; not ready while it does not (paused well within the 15 s TTL).
    expect((await rawRequest(standby.port, { path: "/readyz" })).status).toBe(200);
    first.child.kill("SIGSTOP");
    const stuck = rawRequest(standby.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });
    const unready = await rawRequest(standby.port, { path: "/readyz" }); // its probe of the owner waits 1 s
    expect([unready.status, unready.body.ready, unready.body.role]).toEqual([503, false, "standby"]);
    // The stop ends the relay waiting on the paused owner instead of waiting for it (src/gateway/relay-forwards.ts).
    standby.child.kill("SIGTERM");
    const exited = await standby.exited;
    first.child.kill("SIGCONT");
    expect(exited, standby.output()).toBe(0);
    expect([(await stuck).status, (await stuck).body.error?.code]).toEqual([503, "UNAVAILABLE"]);
    expect(standby.output()).toContain("stopped before it owned the schema (a standby, or still starting)");
    const status = await clusterStatus(await home(schema, "reader"));
    expect(status.members.map((m) => [m.nodeId, m.role])).toEqual([["gw-owner", "owner"]]);
    expect((await rawRequest(first.port, { path: "/healthz" })).body).toEqual({ ok: true });
  }, 120_000);

  it("refuses a second gateway in one line when the owner runs a version that cannot take standbys", async () => {
    const schema = freshSchema();
    const first = await gateway(await home(schema, "gw-old"));
    // What an owner of a version before migration 0005 looks like: a member row with no address.
    const probe = new pg.Client({ connectionString: db.url, options: `-c search_path=${schema}` });
    await probe.connect();
    await probe.query("UPDATE cluster_members SET address = NULL").finally(() => probe.end());
    const second = cli(await home(schema, "gw-new"), ["gateway", "run", "--port", "0"]);
    expect(await second.exited, second.output()).toBe(1);
    expect(second.output().trim().split("\n")).toEqual([
      `gateway not started: another gateway (node gw-old, host ${os.hostname()}, pid ${first.child.pid}, port ${first.port}) ` +
        `already runs on PostgreSQL schema "${schema}"; it runs a version that cannot take standbys: stop it first ` +
        "(docs/scale-out.md), or give this gateway another state.postgres.schema",
    ]);
  }, 120_000);

  it("refuses a second gateway whose session.dmScope differs, naming it and the fix; the first serves on; with every gateway stopped the new config is taken", async () => {
    const schema = freshSchema();
    const dmScope = (scope: string) => ({ session: { dmScope: scope } });
    const first = await gateway(await home(schema, "gw-main", undefined, dmScope("main")));
    const other = cli(await home(schema, "gw-peer", undefined, dmScope("per-peer")), ["gateway", "run", "--port", "0"]);
    expect(await other.exited, other.output()).toBe(1);
    expect(other.output()).toContain(
      "gateway not started: this gateway's routing config differs from that of gateway gw-main, running on " +
        `PostgreSQL schema "${schema}": session.dmScope is "per-peer" here, "main" there. Every gateway on one schema ` +
        "needs the same routing config (session.scope, session.dmScope, session.mainKey, session.identityLinks, " +
        "agents.default, agents.list, bindings), or one chat would get a different session on each: give this gateway the same " +
        "settings, or to change them stop every gateway on the schema and start them with the new ones (docs/scale-out.md)",
    );
    const served = await rawRequest(first.port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });
    expect([served.status, served.body.ok]).toEqual([200, true]);
    const reader = await home(schema, "reader");
    expect((await clusterStatus(reader)).members.map((m) => [m.nodeId, m.role])).toEqual([["gw-main", "owner"]]);
    // Changed on purpose: every gateway stopped, the next start takes the new config and says so.
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const changed = await gateway(await home(schema, "gw-peer", undefined, dmScope("per-peer")));
    await until(() => changed.output().includes("the schema's routing config changed"), 10_000);
    expect((await rawRequest(changed.port, { path: "/healthz" })).body).toEqual({ ok: true });
  }, 120_000);

  it("refuses a gateway whose cluster.owners differs from a running gateway's, naming both modes, that gateway and the fix, either way round", async () => {
    for (const [running, joining] of [
      ["many", "one"],
      ["one", "many"],
    ] as const) {
      const schema = freshSchema();
      const first = await gateway(await home(schema, `gw-${running}`, { owners: running }));
      const other = cli(await home(schema, `gw-${joining}`, { owners: joining }), ["gateway", "run", "--port", "0"]);
      expect(await other.exited, other.output()).toBe(1);
      expect(other.output()).toContain(
        `gateway not started: this gateway's cluster.owners is "${joining}", but gateway gw-${running}, running on ` +
          `PostgreSQL schema "${schema}", runs "${running}". Every gateway on one schema needs the same cluster.owners ` +
          `(a "one" gateway beside "many" ones would wait for every partition at once): set cluster.owners to "${running}" ` +
          "here, or to change the mode stop every gateway on the schema and start them all with the new one (docs/scale-out.md)",
      );
      const reader = await home(schema, "reader");
      expect((await clusterStatus(reader)).members.map((m) => m.nodeId)).toEqual([`gw-${running}`]);
      expect((await rawRequest(first.port, { path: "/healthz" })).body).toEqual({ ok: true });
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
    }
  }, 120_000);

  it("lets a new gateway take the schema from a SIGSTOPped one at its lease TTL; continued, the old one stops itself", async () => {
    const schema = freshSchema();
    const cluster = { leaseTtlMs: 1_000, heartbeatMs: 200 };
    const paused = await gateway(await home(schema, "gw-paused", cluster));
    paused.child.kill("SIGSTOP");
    const probe = new pg.Client({ connectionString: db.url, options: `-c search_path=${schema}` });
    await probe.connect();
    try {
      await until(async () => {
        const { rows } = await probe.query(
          "SELECT expires_at < now() AS expired FROM cluster_leases WHERE name = 'schema:writer'",
        );
        return rows[0]?.expired === true;
      });
      const next = await gateway(await home(schema, "gw-next", cluster));
      paused.child.kill("SIGCONT");
      expect(await paused.exited, paused.output()).toBe(1);
      expect(paused.output()).toContain("another gateway took this schema over; stopping now");
      const status = await clusterStatus(await home(schema, "reader"));
      const holder = status.members.find((m) => m.leases.some((l) => l.name === "schema:writer"));
      expect([holder?.nodeId, holder?.leases[0]?.fence, holder?.pid]).toEqual(["gw-next", 2, next.child.pid]);
    } finally {
      await probe.end();
    }
  }, 120_000);
});
