// The owner's drain of the hand-off inbox (src/gateway/handoff-drain.ts, migration 0006) on a real
// PostgreSQL schema, with the real inbox and stored turns behind its hook intake: rows taken in
// oldest first under their dedupe key and promised run id, woken by NOTIFY, a poison row set aside
// (never retried), and a row drained again after a crash between its intake and its delete run once.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { StoredTurn, TurnRun } from "../../src/agents/stored-turn.js";
import { storeHandoff, waitingHandoffs } from "../../src/cluster/handoff-sql.js";
import { createHandoffDrain } from "../../src/gateway/handoff-drain.js";
import { hookHandoffIntake } from "../../src/hooks/hook-handoff.js";
import { createInbox } from "../../src/inbound/inbox.js";
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

/** The drain of `owner` on `database`; its safety net (every heartbeat) never fires here: only start, NOTIFY and a call drain. */
const drainOf = (database: PostgresDatabase, owner: Awaited<ReturnType<typeof ownerAt>>) =>
  createHandoffDrain({
    database,
    intake: { hook: hookHandoffIntake(owner.turns.start) },
    logger: owner.logger,
    heartbeatMs: 60_000,
  });

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

  it("sets a poison row aside with a warning, never retried, and takes the rows after it in", async () => {
    const data = await database();
    const owner = await ownerAt(randomUUID());
    await store(data, "hook:bad", "bad", { source: "hook", text: 42 });
    await store(data, "hook:good", "good");
    const drain = drainOf(data, owner);
    drains.push(drain);
    await drain.start();
    await drain.drain();
    await owner.turns.idle();
    expect(owner.runs.map((r) => r.text)).toEqual(["good"]);
    const rows = await data.pool.query(
      "SELECT dedupe_key, set_aside_at IS NOT NULL AS aside, set_aside_reason FROM inbound_handoff",
    );
    expect(rows.rows).toEqual([
      { dedupe_key: "hook:bad", aside: true, set_aside_reason: expect.stringMatching(/not a hook turn/) },
    ]);
    expect(owner.logger.records.filter((r) => r.level === "warn").map((r) => r.message)).toContain(
      "handed-off inbound cannot be taken in; set aside in inbound_handoff",
    );
    await drain.drain();
    expect(owner.runs.map((r) => r.text)).toEqual(["good"]);
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
