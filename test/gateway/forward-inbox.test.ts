// Inbox entries across partition owners (src/inbound/inbox-forward.ts, src/gateway/inbox-forwarding.ts,
// migration 0013; docs/scale-out.md "Inbound anywhere"): two owners of one 16-partition schema, each
// with its own pool, its inbox on a state port opened for its half of the partitions, its stored
// turns and its hand-off drain. An entry for a session of the other owner's partition is forwarded
// as an `inbox-entry` row with that part, answered like a stored entry, and runs once on the holder,
// in order with the holder's own entries for that session; a drain takes only its own rows.
import { afterEach, describe, expect, it } from "vitest";
import type { StoredTurn, TurnSource } from "../../src/agents/stored-turn.js";
import { storeHandoff, waitingHandoffs } from "../../src/cluster/handoff-sql.js";
import { announceOfRun, handedOffRun } from "../../src/cluster/run-results-sql.js";
import { createHandoffDrain } from "../../src/gateway/handoff-drain.js";
import { inboxEntryIntake, inboxForwarding } from "../../src/gateway/inbox-forwarding.js";
import { hookHandoffIntake } from "../../src/hooks/hook-handoff.js";
import { createInbox, inboundDedupeKey } from "../../src/inbound/inbox.js";
import { createStoredTurns } from "../../src/inbound/stored-turns.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type InboundMessage, InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { partOf } from "../../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const COUNT = 16;
const PARTS_A = [0, 1, 2, 3, 4, 5, 6, 7];
const PARTS_B = [8, 9, 10, 11, 12, 13, 14, 15];
/** The first session key `agent:main:telegram:dm:<n>` whose partition is in `parts`. */
function sessionIn(parts: number[]): string {
  for (let n = 0; ; n++)
    if (parts.includes(partOf(`agent:main:telegram:dm:${n}`, COUNT))) return `agent:main:telegram:dm:${n}`;
}
const KEY_A = sessionIn(PARTS_A);
const KEY_B = sessionIn(PARTS_B);

const turn = (sessionKey: string, text: string, source: TurnSource = "hook"): StoredTurn => ({
  source,
  sessionKey,
  text,
  owner: false,
  provenance: { kind: "system", channel: source },
  input: {},
});

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** A fresh schema of 16 partitions. */
async function schemaOf16(): Promise<string> {
  const schema = freshSchema();
  await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [
    String(COUNT),
  ]);
  return schema;
}

type Run = { text: string; runId: string; session: string };

/**
 * An owner of `parts` (the global holder when `global`): its own pool, its inbox on a port for those
 * partitions with the forwarding seam, stored turns whose runs are recorded, and its drain (not started).
 */
async function ownerOf(schema: string, name: string, parts: number[], global = false) {
  const held = new Set(parts);
  const reads = { count: 0, after: () => {} };
  const database = observed(await openDatabase(schema), reads);
  const logger = createMemoryLogger();
  const state = openPostgresState(database, { logger, parts });
  closing.push(() => state.close());
  const forwarding = inboxForwarding({
    pool: database.pool,
    schema,
    nodeId: name,
    partitions: COUNT,
    held: () => held,
  });
  const inbox = await createInbox({ state, path: "inbox.json", logger, ...forwarding });
  const turns = createStoredTurns({ inbox, logger });
  const runs: Run[] = [];
  for (const source of ["hook", "abort", "announce"] as const)
    turns.register(source, {
      run: async (t, run) => void runs.push({ text: t.text, runId: run.runId, session: t.sessionKey }),
    });
  const messages: Array<{ text: string; runId: string; status: string }> = [];
  // The pipeline's `accept` as far as the inbox: routed (this test's routing gives the chat KEY_B) and
  // stored (or deduped) here under its platform key.
  const accept = async (raw: unknown, options: { sessionKey?: string; runId?: string }) => {
    const message = InboundMessageSchema.parse(raw);
    const routed = { ...options, ...(options.sessionKey === undefined && { session: KEY_B }) };
    const claim = await inbox.claim(inboundDedupeKey(message), message, routed);
    messages.push({ text: message.text ?? "", runId: "entry" in claim ? claim.entry.runId : "", status: claim.status });
    return { result: new Promise<never>(() => {}) };
  };
  const intake = {
    "inbox-entry": inboxEntryIntake({ start: turns.start, accept }),
    hook: hookHandoffIntake(turns.start),
  };
  const drain = createHandoffDrain({
    database,
    intake,
    logger,
    heartbeatMs: 60_000,
    held: () => held,
    global: () => global,
  });
  closing.push(() => drain.stop());
  return { database, inbox, turns, runs, messages, drain, logger, held, reads };
}

/** `database` with the drain's reads of waiting rows counted, `reads.after` run once each has answered. */
function observed(database: PostgresDatabase, reads: { count: number; after: () => void }): PostgresDatabase {
  const query = database.pool.query.bind(database.pool) as (...args: unknown[]) => Promise<unknown>;
  const counted = (...args: unknown[]) => {
    const answer = query(...args);
    if (typeof args[0] !== "string" || !args[0].includes("FROM inbound_handoff\n      WHERE set_aside_at IS NULL"))
      return answer;
    reads.count++;
    return answer.then((rows) => {
      reads.after();
      return rows;
    });
  };
  const pool = new Proxy(database.pool, {
    get(target, key) {
      if (key === "query") return counted;
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...database, pool };
}

const rows = async (database: PostgresDatabase) =>
  (await database.pool.query("SELECT kind, dedupe_key, part, run_id FROM inbound_handoff ORDER BY id")).rows;

const message = (text: string, id: string): InboundMessage =>
  InboundMessageSchema.parse({
    channel: "telegram",
    accountId: "default",
    chat: { type: "direct", id: "42" },
    sender: { id: "42" },
    messageId: id,
    text,
    timestamp: 1,
  });

describe("inbox entries forwarded to their partition's holder", () => {
  it("answers a turn for a session of B's partition on A with its run id, stores it once, and runs it once on B, before B's own later turn", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    expect(await a.turns.start(turn(KEY_B, "first"), { dedupeKey: "hook:1", runId: "run-1" })).toEqual({
      status: "new",
      runId: "run-1",
      sessionKey: KEY_B,
    });
    // A replay on the sender stores nothing more and answers the first run.
    expect(await a.turns.start(turn(KEY_B, "first again"), { dedupeKey: "hook:1", runId: "run-x" })).toEqual({
      status: "pending",
      runId: "run-1",
      sessionKey: KEY_B,
    });
    expect(await rows(a.database)).toEqual([
      { kind: "inbox-entry", dedupe_key: "hook:1", part: partOf(KEY_B, COUNT), run_id: "run-1" },
    ]);
    expect(a.inbox.pending()).toEqual([]);
    await b.drain.start();
    await b.drain.beforeOwnInbound();
    await b.turns.start(turn(KEY_B, "second"), { dedupeKey: "hook:2", runId: "run-2" });
    await until(() => b.runs.length === 2, 10_000);
    await b.turns.idle();
    expect(b.runs).toEqual([
      { text: "first", runId: "run-1", session: KEY_B },
      { text: "second", runId: "run-2", session: KEY_B },
    ]);
    expect(a.runs).toEqual([]);
    expect(await rows(a.database)).toEqual([]);
    // A repeat after B took it in and ran it: known to B's inbox, nothing stored, nothing runs.
    expect(await a.turns.start(turn(KEY_B, "late"), { dedupeKey: "hook:1" })).toEqual({
      status: "done",
      runId: "run-1",
      sessionKey: KEY_B,
    });
    expect(await rows(a.database)).toEqual([]);
    await b.drain.drain();
    expect(b.runs).toHaveLength(2);
  });

  it("runs an abort and an announce stored on A into a B session on B, in the order A stored them; A's own session runs on A", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    await b.drain.start();
    await a.turns.start(turn(KEY_B, "stop it", "abort"), { dedupeKey: "abort:1" });
    await a.turns.start(turn(KEY_B, "child done", "announce"), { dedupeKey: "announce:1" });
    await a.turns.start(turn(KEY_A, "mine", "announce"), { dedupeKey: "announce:2" });
    await until(() => b.runs.length === 2, 10_000);
    await Promise.all([a.turns.idle(), b.turns.idle()]);
    expect(b.runs.map((r) => r.text)).toEqual(["stop it", "child done"]);
    expect(a.runs.map((r) => r.text)).toEqual(["mine"]);
  });

  it("forwards a platform message routed to a B session; B's inbox stores it under its platform key and A's run id; a repeat after that stores nothing", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    const m = message("hello", "7");
    const claim = await a.inbox.claim(inboundDedupeKey(m), m, { session: KEY_B, runId: "run-m" });
    expect(claim).toEqual({ status: "forwarded", runId: "run-m", sessionKey: KEY_B, repeat: false });
    // Promised while it waits (agent.wait on any gateway), in its routed session.
    expect(await handedOffRun(a.database.pool, "run-m")).toMatchObject({ sessionKey: KEY_B });
    await b.drain.start();
    await until(() => b.messages.length === 1, 10_000);
    expect(b.messages).toEqual([{ text: "hello", runId: "run-m", status: "new" }]);
    expect(b.inbox.pending().map((e) => [e.dedupeKey, e.runId, e.session])).toEqual([
      [inboundDedupeKey(m), "run-m", KEY_B],
    ]);
    await until(async () => (await rows(a.database)).length === 0, 10_000);
    // Taken into B's inbox (its hand-off row gone), it is still promised, as pending there; no announce yet.
    expect(await handedOffRun(a.database.pool, "run-m")).toMatchObject({ sessionKey: KEY_B });
    expect(await announceOfRun(a.database.pool, "run-m")).toEqual({ pending: true, announced: false });
    // The platform delivers it again to A: B's inbox holds the key, so A stores nothing.
    expect(await a.inbox.claim(inboundDedupeKey(m), m, { session: KEY_B })).toEqual({
      status: "forwarded",
      runId: "run-m",
      sessionKey: KEY_B,
      repeat: true,
    });
    expect(await rows(a.database)).toEqual([]);
  });

  it("takes only its own rows: B leaves a row of A's partition and a row of no part; the global holder A forwards that hook row to B", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    await b.turns.start(turn(KEY_A, "for a"), { dedupeKey: "hook:a", runId: "run-a" });
    // A hook a standby stored (no part): the global holder's.
    const hookRow = { kind: "hook" as const, dedupeKey: "hook:b", runId: "run-b", receivedBy: "gw-standby" };
    await storeHandoff(b.database.pool, schema, { ...hookRow, payload: turn(KEY_B, "for b") });
    await b.drain.drain();
    expect(b.runs).toEqual([]);
    expect((await rows(b.database)).map((r) => r.dedupe_key)).toEqual(["hook:a", "hook:b"]);
    // A takes its entry in and forwards the hook of B's session under the same key and run id.
    await a.drain.drain();
    await a.turns.idle();
    expect(a.runs).toEqual([{ text: "for a", runId: "run-a", session: KEY_A }]);
    expect(await rows(a.database)).toEqual([
      { kind: "inbox-entry", dedupe_key: "hook:b", part: partOf(KEY_B, COUNT), run_id: "run-b" },
    ]);
    // A's drain does not take B's row back.
    await a.drain.drain();
    expect(a.runs).toHaveLength(1);
    await b.drain.drain();
    await b.turns.idle();
    expect(b.runs).toEqual([{ text: "for b", runId: "run-b", session: KEY_B }]);
    expect(await waitingHandoffs(a.database.pool)).toEqual([]);
  });

  it("leaves a row whose partition B let go after its pass read it (a rebalance): nothing runs on B, the row waits uncounted", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    await a.turns.start(turn(KEY_B, "moved"), { dedupeKey: "hook:m", runId: "run-m" });
    b.reads.after = () => b.held.delete(partOf(KEY_B, COUNT));
    await b.drain.drain();
    await b.turns.idle();
    expect(b.runs).toEqual([]);
    expect(b.inbox.pending()).toEqual([]);
    const left = await a.database.pool.query("SELECT dedupe_key, attempts FROM inbound_handoff");
    expect(left.rows).toEqual([{ dedupe_key: "hook:m", attempts: 0 }]);
  });

  it("wakes only the holder of a row's part: the global holder A drains for a row of no part, not for a forward to B", async () => {
    const schema = await schemaOf16();
    const a = await ownerOf(schema, "gw-a", PARTS_A, true);
    const b = await ownerOf(schema, "gw-b", PARTS_B);
    await Promise.all([a.drain.start(), b.drain.start()]);
    a.reads.count = 0;
    await a.turns.start(turn(KEY_B, "for b"), { dedupeKey: "hook:1" });
    await until(() => b.runs.length === 1, 10_000);
    const hookRow = { kind: "hook" as const, dedupeKey: "hook:2", runId: "run-2", receivedBy: "gw-standby" };
    await storeHandoff(b.database.pool, schema, { ...hookRow, payload: turn(KEY_A, "for a") });
    // A's NOTIFYs arrive in order on its one connection: once it ran the second row, the first was filtered.
    await until(() => a.runs.length === 1, 10_000);
    expect(a.reads.count).toBe(1);
  });
});
