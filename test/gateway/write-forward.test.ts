// Per-session writes forwarded by the global holder (`cluster.owners: "many"`, docs/scale-out.md
// "Per-session writes in many mode") on a real PostgreSQL schema of 16 partitions: core A holds
// partitions 0-7 and serves the clients; core B, gateway "gw-b", holds 8-15 and answers peer calls
// on a real HTTP server (./peer-route.ts, ./peer-methods.ts). A write of B's session asked of A runs
// on B, and its answer is A's client's; a write whose partition moved meanwhile is asked again at
// the new holder; one of a partition nobody holds is UNAVAILABLE.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { partitionLeases } from "../../src/cluster/cluster-status.js";
import { acquireLeases, joinMember } from "../../src/cluster/lease-sql.js";
import { createPeerCall } from "../../src/cluster/peer-call.js";
import { readRelaySecret } from "../../src/cluster/relay-secret.js";
import { parseConfig } from "../../src/config/index.js";
import { dispatchRequest } from "../../src/gateway/dispatch-request.js";
import type { GatewayCore } from "../../src/gateway/gateway-core.js";
import { type PeerHandlers, createPeerHandlers } from "../../src/gateway/peer-handlers.js";
import { servePeerMethods } from "../../src/gateway/peer-methods.js";
import { createPeerLimiter, isPeerCall, servePeerCall } from "../../src/gateway/peer-route.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { postgresTranscriptsOpener } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { closersAfterEach } from "../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { createTestCore, homeForTest } from "../support/test-core.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

const COUNT = 16;
const HELD = [0, 1, 2, 3, 4, 5, 6, 7];
const OTHER = [8, 9, 10, 11, 12, 13, 14, 15];
const { config } = parseConfig({});
const inParts = (parts: number[]) => (key: string) => parts.includes(partOf(key, COUNT));
const dm = (i: number) => `agent:main:telegram:dm:${i}`;
const KEYS = Array.from({ length: 40 }, (_, i) => dm(i));
const OWN = KEYS.filter(inParts(HELD)).slice(0, 1);
const FOREIGN = KEYS.filter(inParts(OTHER)).slice(0, 3);

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** A peer server answering as `nodeId` from `handlers`; its address. */
async function peerServer(nodeId: string, handlers: PeerHandlers, relaySecret: string): Promise<string> {
  const guard = createTokenGuard({ token: undefined, trustedProxies: [], now: Date.now });
  const deps = {
    handlers,
    guard,
    limiter: createPeerLimiter(),
    nodeId: () => nodeId,
    relaySecret: async () => relaySecret,
    logger,
  };
  const server = http.createServer((req, res) => {
    if (isPeerCall(req)) void servePeerCall(req, res, deps);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A core opened for `parts` of the schema (as a partition member's). */
async function coreFor(database: PostgresDatabase, parts: number[], name: string, partial?: object) {
  const state = openPostgresState(database, { logger, parts });
  const core = await createTestCore(config, await homeForTest(name), {
    state,
    openTranscripts: postgresTranscriptsOpener(database),
    ...(partial && { partial: partial as never }),
  });
  closing.push(() => core.stop(0));
  return { core, state };
}

/** Member `nodeId` at `address`, holding `parts`. */
async function member(database: PostgresDatabase, nodeId: string, address: string, parts: number[]) {
  const row = { nodeId, incarnation: `${nodeId}-1`, host: "h", pid: 1, port: 1, lockKey: "1", address };
  await joinMember(database.pool, row);
  const names = partitionLeases(COUNT).filter((_, n) => parts.includes(n));
  expect(await acquireLeases(database.pool, names, row.incarnation, 60_000)).toHaveProperty("leases");
}

/** Core A (the global holder, partitions 0-7, forwarding) and core B ("gw-b", 8-15) with FOREIGN's sessions. */
async function twoCores() {
  const schema = freshSchema();
  const setup = await openDatabase(schema);
  await setup.pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [String(COUNT)]);
  const database = await openDatabase(schema);
  const secret = await readRelaySecret(database.pool);
  const b = await coreFor(database, OTHER, "forward-b");
  const handlersB = createPeerHandlers();
  const unserveB = servePeerMethods(handlersB, { core: b.core, holds: inParts(OTHER), nodeId: "gw-b" });
  await member(database, "gw-b", await peerServer("gw-b", handlersB, secret), OTHER);
  const { store } = await b.core.sessions.forAgent("main");
  for (const [i, key] of FOREIGN.entries())
    await store.patch(key, () => ({ sessionId: `s-b-${i}`, updatedAt: Date.now(), label: `b${i}` }));
  await b.state.flush();
  const call = createPeerCall({ relaySecret: async () => secret });
  const a = await coreFor(database, HELD, "forward-a", { database, holds: inParts(HELD), call });
  const own = await a.core.sessions.forAgent("main");
  await own.store.patch(OWN[0]!, () => ({ sessionId: "s-a-0", updatedAt: Date.now(), label: "a0" }));
  await a.state.flush();
  let id = 0;
  const ask = async (method: string, params: unknown) =>
    dispatchRequest(a.core, { type: "req", id: String(++id), method, params }, { client: "client-1" });
  return { a: a.core, b: b.core, database, secret, ask, unserveB };
}

const entryOn = async (core: GatewayCore, key: string) => (await core.sessions.forAgent("main")).store.get(key);

describe("per-session writes of another gateway's session, asked of the global holder", () => {
  it("run on the owner's core and answer the client: patch, reset, delete, abort, a session tool; a label stays unique across partitions", async () => {
    const { a, b, ask } = await twoCores();
    const patched = await ask("sessions.patch", { key: FOREIGN[0], sendPolicy: "deny", label: "renamed" });
    expect(patched).toMatchObject({
      ok: true,
      payload: { key: FOREIGN[0], entry: { sendPolicy: "deny", label: "renamed" } },
    });
    expect(await entryOn(b, FOREIGN[0]!)).toMatchObject({ sendPolicy: "deny", label: "renamed", sessionId: "s-b-0" });
    expect(await ask("sessions.patch", { key: FOREIGN[0], label: "a0" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_REQUEST", message: `label already in use: a0 (${OWN[0]})` },
    });
    const reset = await ask("sessions.reset", { key: FOREIGN[1] });
    expect(reset).toMatchObject({ ok: true, payload: { key: FOREIGN[1], entry: { label: "b1" } } });
    expect((await entryOn(b, FOREIGN[1]!))?.sessionId).not.toBe("s-b-1");
    expect(await ask("sessions.delete", { key: FOREIGN[2] })).toMatchObject({ ok: true, payload: { deleted: true } });
    expect(await entryOn(b, FOREIGN[2]!)).toBeUndefined();
    const listed = await ask("sessions.list", {});
    const keys = ((listed as { payload: { sessions: Array<{ key: string }> } }).payload.sessions ?? []).map(
      (s) => s.key,
    );
    expect(keys).not.toContain(FOREIGN[2]);
    expect(await ask("chat.abort", { sessionKey: FOREIGN[0] })).toMatchObject({
      ok: true,
      payload: { aborted: [], cleared: 0 },
    });
    const tool = await ask("tools.invoke", { tool: "sessions_list", sessionKey: FOREIGN[0] });
    expect(tool).toMatchObject({ ok: true });
    // The owner's own errors come back as they are: no such sub-agent run on B.
    expect(await ask("subagents.stop", { sessionKey: FOREIGN[0], runId: "nope" })).toMatchObject({
      ok: false,
      error: { code: "NOT_FOUND", message: expect.stringContaining("No sub-agent run nope") },
    });
    expect(await entryOn(a, FOREIGN[0]!)).toBeUndefined();
  });

  it("answers UNAVAILABLE, changing nothing, when the owner has no core open (its handlers removed) at both attempts", async () => {
    const { b, ask, unserveB } = await twoCores();
    unserveB();
    expect(await ask("sessions.patch", { key: FOREIGN[0], label: "never" })).toMatchObject({
      ok: false,
      error: { code: "UNAVAILABLE", message: expect.stringContaining("serves no peer call method:sessions.patch") },
    });
    expect(await entryOn(b, FOREIGN[0]!)).toMatchObject({ label: "b0" });
  });

  it("asks again at the partition's new holder when the owner read no longer holds it; UNAVAILABLE when nobody does", async () => {
    const { b, database, secret, ask } = await twoCores();
    const part = partOf(FOREIGN[0]!, COUNT);
    // gw-b has just lost the partition (a rebalance): its core refuses, and the lease is gw-c's by then.
    const lost = createPeerHandlers();
    servePeerMethods(lost, { core: b, holds: () => false, nodeId: "gw-b" });
    const refusedOnB: string[] = [];
    const moving: PeerHandlers = {
      set: lost.set,
      get: (name) => async (params) => {
        refusedOnB.push(name);
        await database.pool.query("UPDATE cluster_leases SET owner = 'gw-c-1' WHERE name = $1", [
          partitionLeases(COUNT)[part],
        ]);
        return lost.get(name)!(params);
      },
    };
    const handlersC = createPeerHandlers();
    servePeerMethods(handlersC, { core: b, holds: inParts(OTHER), nodeId: "gw-c" });
    const addressC = await peerServer("gw-c", handlersC, secret);
    await joinMember(database.pool, {
      nodeId: "gw-c",
      incarnation: "gw-c-1",
      host: "h",
      pid: 1,
      port: 1,
      lockKey: "2",
      address: addressC,
    });
    await database.pool.query("UPDATE cluster_members SET address = $1 WHERE node_id = 'gw-b'", [
      await peerServer("gw-b", moving, secret),
    ]);
    expect(await ask("sessions.patch", { key: FOREIGN[0], sendPolicy: "deny" })).toMatchObject({ ok: true });
    expect(refusedOnB).toEqual(["method:sessions.patch"]);
    expect(await entryOn(b, FOREIGN[0]!)).toMatchObject({ sendPolicy: "deny" });
    await database.pool.query("DELETE FROM cluster_leases WHERE name = $1", [partitionLeases(COUNT)[part]]);
    expect(await ask("sessions.reset", { key: FOREIGN[0] })).toMatchObject({
      ok: false,
      error: {
        code: "UNAVAILABLE",
        message: `session ${FOREIGN[0]} is in partition ${part}: no gateway holds it right now; retry sessions.reset soon`,
      },
    });
  });
});
