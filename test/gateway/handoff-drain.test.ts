// The owner's drain of the hand-off inbox (src/gateway/handoff-drain.ts, migration 0006) on a real
// PostgreSQL schema, with the real inbox and stored turns behind its hook intake: rows taken in
// oldest first under their dedupe key and promised run id, woken by NOTIFY (also after its LISTEN
// connection was killed) or by its heartbeat, a failing row passed over, put off by its backoff and
// set aside only after N attempts and a minimum age, a storage failure ending the pass and pausing
// the drain, the pass before an owner's own inbound skipping failing rows, and a row drained again
// after a crash between its intake and its delete run once.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { StoredTurn, TurnRun } from "../../src/agents/stored-turn.js";
import { handoffChannel, storeHandoff, waitingHandoffs } from "../../src/cluster/handoff-sql.js";
import { type HandoffDrainDeps, createHandoffDrain } from "../../src/gateway/handoff-drain.js";
import { hookHandoffIntake } from "../../src/hooks/hook-handoff.js";
import { InboxWriteError, createInbox } from "../../src/inbound/inbox.js";
import { createStoredTurns } from "../../src/inbound/stored-turns.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { onMemoryState } from "../support/memory-state.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
const drains: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  for (const drain of drains.splice(0)) await drain.stop();
  for (const database of opened.splice(0)) await database.close();
});

const turn = (text: string): StoredTurn => ({
  source: "hook",
  sessionKey: "agent:main:hook:ci",
  text,
  owner: false,
  provenance: { kind: "system", channel: "hook" },
  input: { isolated: false },
});

/** An owner's inbox (in memory; reopened at the same place after a "crash") with a runner recording each run. */
async function ownerAt(place: string) {
  const logger = createMemoryLogger();
  const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger }, place));
  const turns = createStoredTurns({ inbox, logger });
  const runs: Array<{ text: string; run: TurnRun }> = [];
  turns.register("hook", { run: async (t, run) => void runs.push({ text: t.text, run }) });
  return { turns, runs, logger };
}

/** A fresh schema, migrated; `failDeletes` makes the drain's delete fail (a crash right after the intake). */
async function database(schema = freshSchema(), failDeletes = false): Promise<PostgresDatabase> {
  const opening = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
  opened.push(opening);
  if (!failDeletes) return opening;
  return { ...opening, transaction: () => Promise.reject(new Error("killed before the delete committed")) };
}

type Owner = Awaited<ReturnType<typeof ownerAt>>;

/** What the drain of `owner` on `database` needs; its safety net (every heartbeat) never fires: only start, NOTIFY and a call drain. */
const drainDeps = (database: PostgresDatabase, owner: Owner, setAside?: HandoffDrainDeps["setAside"]) => ({
  database,
  intake: { hook: hookHandoffIntake(owner.turns.start) },
  logger: owner.logger,
  heartbeatMs: 60_000,
  ...(setAside && { setAside }),
});

const drainOf = (database: PostgresDatabase, owner: Owner, setAside?: HandoffDrainDeps["setAside"]) =>
  createHandoffDrain(drainDeps(database, owner, setAside));

/** Makes every waiting row due now (the server's clock moved on past its backoff). */
const makeDue = (database: PostgresDatabase) =>
  database.pool.query("UPDATE inbound_handoff SET next_attempt_at = now()");

/** How far off (ms, the server's clock) each row's next attempt is. */
const putOffMs = async (database: PostgresDatabase) =>
  (
    await database.pool.query<{ ms: number }>(
      "SELECT (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS ms FROM inbound_handoff ORDER BY id",
    )
  ).rows.map((r) => r.ms);

const handoffState = async (database: PostgresDatabase) =>
  (
    await database.pool.query(
      "SELECT dedupe_key, attempts, set_aside_at IS NOT NULL AS aside, last_error FROM inbound_handoff ORDER BY id",
    )
  ).rows;

const warnings = (owner: Owner) => owner.logger.records.filter((r) => r.level === "warn").map((r) => r.message);

const store = (database: PostgresDatabase, key: string, text: string, payload: unknown = turn(text)) =>
  storeHandoff(database.pool, database.schema, {
    kind: "hook",
    dedupeKey: key,
    runId: `run-${key}`,
    payload,
    receivedBy: "gw-standby",
  });

describe("the hand-off inbox's drain", () => {
  it("stores a dedupe key once, then takes each row in oldest first under its key and promised run id, woken by NOTIFY", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    expect(await store(data, "hook:a", "first")).toMatchObject({ status: "new", runId: "run-hook:a" });
    // A repeat of the key stores nothing and answers the first row's run id.
    expect(await store(data, "hook:a", "again")).toMatchObject({ status: "duplicate", runId: "run-hook:a" });
    const drain = drainOf(data, owner);
    drains.push(drain);
    await drain.start();
    await store(data, "hook:b", "second");
    await until(() => owner.runs.length === 2, 10_000);
    await owner.turns.idle();
    expect(owner.runs.map((r) => [r.text, r.run.runId])).toEqual([
      ["first", "run-hook:a"],
      ["second", "run-hook:b"],
    ]);
    await until(async () => (await waitingHandoffs(data.pool)).length === 0, 10_000);
  });

  it("passes over a failing row without holding up the rows behind it, and sets it aside only after N attempts AND a minimum age", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    await store(data, "hook:bad", "bad", { source: "hook", text: 42 });
    await store(data, "hook:good", "good");
    // Not started (no LISTEN, no heartbeat): each pass is one call.
    const drain = drainOf(data, owner, { attempts: 3, minAgeMs: 60_000 });
    drains.push(drain);
    await drain.drain();
    await owner.turns.idle();
    expect(owner.runs.map((r) => r.text)).toEqual(["good"]);
    // Put off by its backoff (1 s after the first failure): passes right after it do not try it.
    expect(await putOffMs(data)).toEqual([expect.closeTo(1_000, -3)]);
    await drain.drain();
    await drain.drain();
    expect(await handoffState(data)).toMatchObject([{ dedupe_key: "hook:bad", attempts: 1 }]);
    // Due again (the clock past its backoff): tried once per due time, each backoff twice the last.
    await makeDue(data);
    await drain.drain();
    expect(await putOffMs(data)).toEqual([expect.closeTo(2_000, -3)]);
    await makeDue(data);
    await drain.drain();
    // Three failed intakes, but younger than a minute: still waiting, its error kept.
    expect(await handoffState(data)).toEqual([
      { dedupe_key: "hook:bad", attempts: 3, aside: false, last_error: expect.stringMatching(/not a hook turn/) },
    ]);
    expect(warnings(owner)).toContain("handed-off inbound not taken in yet; tried again at the next pass");
    // As old as the minimum (the server's clock moved back for it): the next failure sets it aside.
    await data.pool.query("UPDATE inbound_handoff SET created_at = now() - interval '2 minutes'");
    await makeDue(data);
    await drain.drain();
    expect(await handoffState(data)).toEqual([
      { dedupe_key: "hook:bad", attempts: 4, aside: true, last_error: expect.stringMatching(/not a hook turn/) },
    ]);
    expect(warnings(owner)).toContain("handed-off inbound cannot be taken in; set aside in inbound_handoff");
    await makeDue(data);
    await drain.drain();
    expect((await handoffState(data))[0]).toMatchObject({ attempts: 4 });
    expect(owner.runs.map((r) => r.text)).toEqual(["good"]);
  });

  it("spreads a row's attempts over time however many passes run: one already ten minutes old is not set aside by a burst of passes", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    await store(data, "hook:old", "old", { source: "hook", text: 42 });
    await data.pool.query("UPDATE inbound_handoff SET created_at = now() - interval '11 minutes'");
    const drain = drainOf(data, owner);
    drains.push(drain);
    // Ten passes in a row (a NOTIFY or a hook each, well within a second): one attempt, not ten.
    for (let i = 0; i < 10; i++) await drain.drain();
    expect(await handoffState(data)).toMatchObject([{ dedupe_key: "hook:old", attempts: 1, aside: false }]);
  });

  it("before an owner's own inbound, takes in the rows never tried and skips the failing ones (tried at the drain's own passes)", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    await store(data, "hook:bad", "bad", { source: "hook", text: 42 });
    const drain = drainOf(data, owner);
    drains.push(drain);
    await drain.drain();
    await makeDue(data);
    await store(data, "hook:fresh", "fresh");
    await drain.beforeOwnInbound();
    await owner.turns.idle();
    expect(owner.runs.map((r) => r.text)).toEqual(["fresh"]);
    expect(await handoffState(data)).toMatchObject([{ dedupe_key: "hook:bad", attempts: 1 }]);
    await drain.drain();
    expect(await handoffState(data)).toMatchObject([{ dedupe_key: "hook:bad", attempts: 2 }]);
  });

  it("ends a pass at a storage failure (the rows behind it wait, in order) and takes them in at the next pass", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    let refuse = true;
    let clock = 0;
    const hook = hookHandoffIntake(owner.turns.start);
    const drain = createHandoffDrain({
      now: () => clock,
      database: data,
      intake: {
        hook: (row) => (refuse ? Promise.reject(new InboxWriteError(new Error("disk full"))) : hook(row)),
      },
      logger: owner.logger,
      heartbeatMs: 60_000,
    });
    drains.push(drain);
    await store(data, "hook:1", "one");
    await store(data, "hook:2", "two");
    await drain.drain();
    expect(await handoffState(data)).toEqual([
      { dedupe_key: "hook:1", attempts: 1, aside: false, last_error: expect.stringMatching(/disk full/) },
      { dedupe_key: "hook:2", attempts: 0, aside: false, last_error: null },
    ]);
    expect(warnings(owner)).toContain("handed-off inbound not stored by the owner; the rows behind it wait");
    refuse = false;
    // The drain pauses (1 s after the first storage failure): a pass asked for meanwhile does nothing.
    await drain.drain();
    expect(await handoffState(data)).toMatchObject([{ attempts: 1 }, { attempts: 0 }]);
    clock += 1_000;
    await drain.drain();
    await owner.turns.idle();
    expect(owner.runs.map((r) => r.text)).toEqual(["one", "two"]);
    expect(await handoffState(data)).toEqual([]);
  });

  it("drains a row stored without a NOTIFY within a heartbeat (the safety net)", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    const drain = createHandoffDrain({
      database: data,
      intake: { hook: hookHandoffIntake(owner.turns.start) },
      logger: owner.logger,
      heartbeatMs: 200,
    });
    drains.push(drain);
    await drain.start();
    // Stored as a receiver whose NOTIFY was lost: no wake-up but the heartbeat's.
    await data.pool.query(
      "INSERT INTO inbound_handoff (kind, dedupe_key, run_id, payload, received_by) VALUES ('hook', 'hook:quiet', 'run-quiet', $1, 'gw-x')",
      [JSON.stringify(turn("unannounced"))],
    );
    await until(() => owner.runs.length === 1, 10_000);
    await owner.turns.idle();
    expect(owner.runs.map((r) => [r.text, r.run.runId])).toEqual([["unannounced", "run-quiet"]]);
  });

  it("listens again when its LISTEN connection is killed: the next NOTIFY still wakes it (its heartbeat a minute away)", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    const drain = createHandoffDrain({ ...drainDeps(data, owner), retryMs: 50 });
    drains.push(drain);
    await drain.start();
    const listening = async () =>
      (
        await data.pool.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()",
          [`LISTEN ${handoffChannel(data.schema)}`],
        )
      ).rows.map((r) => r.pid);
    const [first] = await listening();
    expect(first).toBeDefined();
    await data.pool.query("SELECT pg_terminate_backend($1)", [first]);
    await until(async () => {
      const now = await listening();
      return now.length === 1 && now[0] !== first;
    }, 10_000);
    // The reconnect drains once by itself; each row after that only a NOTIFY can wake.
    for (const [i, text] of ["after the kill", "and again"].entries()) {
      await store(data, `hook:relisten-${i}`, text);
      await until(() => owner.runs.length === i + 1, 10_000);
    }
    await owner.turns.idle();
    expect(owner.runs.map((r) => r.text)).toEqual(["after the kill", "and again"]);
  });

  it("runs a row once when the owner crashed between its intake and its delete: the next drain's intake drops it by its dedupe key", async () => {
    const schema = freshSchema();
    const place = randomUUID();
    const crashing = await database(schema, true);
    await store(crashing, "hook:once", "only once");
    const first = await ownerAt(place);
    const before = drainOf(crashing, first);
    await before.drain();
    await before.stop();
    await first.turns.idle();
    expect(first.runs.map((r) => r.run.runId)).toEqual(["run-hook:once"]);
    expect((await waitingHandoffs(crashing.pool)).map((r) => r.dedupeKey)).toEqual(["hook:once"]);

    // The next owner: the same inbox (as stored), the row still there.
    const next = await ownerAt(place);
    const data = await database(schema);
    const after = drainOf(data, next);
    await after.drain();
    await next.turns.idle();
    expect(next.runs).toEqual([]);
    expect(await waitingHandoffs(data.pool)).toEqual([]);
  });
});
