// Durable run results on a real PostgreSQL schema (migration 0009, src/cluster/run-results.ts): a
// run's end rides the batch being filled (the turn's one statement, no round trip of its own) and
// NOTIFYs its run id on the schema's channel when it commits; a stale fence refuses it with the
// batch; a wait is woken by that NOTIFY (also after its LISTEN connection was killed); a run the
// hand-off inbox holds is pending; old ends are pruned at most once per period.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { storeHandoff } from "../../src/cluster/handoff-sql.js";
import { END_BEFORE_DONE_MS, type RunResultsDeps, createRunResults } from "../../src/cluster/run-results.js";
import { readRunResult, runResultsChannel } from "../../src/cluster/run-results-sql.js";
import { createMemoryLogger } from "../../src/logger.js";
import { createPostgresTranscripts } from "../../src/sessions/transcripts/postgres-transcripts.js";
import type { RunResultRow } from "../../src/state/postgres/batch-sql.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A migrated fresh schema, counting its transactions; `fence` makes it carry that (stale or not) fence. */
async function open(schema = freshSchema(), fence?: PostgresDatabase["fence"]) {
  const opening = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
  closing.push(() => opening.close());
  const transactions: string[] = [];
  const database: PostgresDatabase = {
    ...opening,
    ...(fence && { fence }),
    transaction: (fn, options) => {
      transactions.push(options?.single ? "one statement" : "BEGIN/COMMIT");
      return opening.transaction(fn, options);
    },
  };
  return { database, transactions, schema };
}

function results(database: PostgresDatabase, extra: Partial<RunResultsDeps> = {}) {
  const opened = createRunResults({ database, logger: createMemoryLogger(), ...extra });
  closing.push(() => opened.close());
  return opened;
}

/** A client LISTENing on the schema's run results channel, collecting the payloads. */
async function listenTo(schema: string) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  closing.push(() => client.end());
  const heard: string[] = [];
  client.on("notification", (message) => heard.push(message.payload ?? ""));
  await client.query(`LISTEN ${runResultsChannel(schema)}`);
  return heard;
}

const end = (runId: string, fields: Partial<RunResultRow> = {}): RunResultRow => ({
  runId,
  sessionKey: "agent:main:main",
  status: "ok",
  text: `answer of ${runId}`,
  queuedAt: 1_700_000_000_000,
  startedAt: 1_700_000_000_100,
  endedAt: 1_700_000_000_900,
  ...fields,
});

describe("durable run results", () => {
  it("stores a run's end in the batch that carries the turn's lines and rows: one statement, then a NOTIFY of its run id", async () => {
    const { database, transactions, schema } = await open();
    const heard = await listenTo(schema);
    const state = openPostgresState(database, { logger: createMemoryLogger() });
    const outbox = await state.table<{ text: string }>({
      name: "outbox",
      path: "outbox.json",
      what: "outbox",
      check: (_key, row) => ({ value: row as { text: string } }),
      invalidRows: "keep",
    });
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    const stored = results(database);
    transactions.length = 0;
    // The text holds a NUL and half an emoji: stored as U+FFFD, as every jsonb value of the batch.
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: "hello", runId: "r1" }),
      outbox.set("r1:reply", { text: "hello" }),
      stored.record(end("r1", { text: "hello \u0000 \ud83d" })),
    ]);
    expect(transactions).toEqual(["one statement"]);
    expect(await readRunResult(database.pool, "r1")).toEqual(end("r1", { text: "hello \ufffd \ufffd" }));
    await until(() => heard.includes("r1"));
    // Ended again under its id (a re-run): the row is replaced.
    await stored.record(end("r1", { status: "error", text: undefined, error: "boom", endedAt: 1_700_000_001_000 }));
    expect(await stored.get("r1")).toMatchObject({ status: "error", error: "boom", endedAt: 1_700_000_001_000 });
    expect((await stored.get("r1"))?.text).toBeUndefined();
    await state.close();
  });

  it("refuses a run's end with its batch when the fence is stale: nothing stored, nothing NOTIFYed", async () => {
    const { database, schema } = await open(freshSchema(), () => ({
      leases: ["schema:writer"],
      owner: "gone",
      fences: [9],
    }));
    const heard = await listenTo(schema);
    const stored = results(database);
    // The gateway's fenced database turns SBF01 into FencedOutError (test/state/postgres/turn-commit.test.ts).
    await expect(stored.record(end("r2"))).rejects.toMatchObject({ code: "SBF01" });
    expect(await readRunResult(database.pool, "r2")).toBeUndefined();
    // A NOTIFY of a committed end comes after its commit: one committed since would be heard first.
    const { database: plain } = await open(schema);
    await results(plain).record(end("r3"));
    await until(() => heard.length > 0);
    expect(heard).toEqual(["r3"]);
  });

  it("wakes a wait by the end's NOTIFY, far within its timeout, also once its LISTEN connection was killed; a stop answers it", async () => {
    const { database: opened, schema } = await open();
    // Counts the reads that answered, so the end is stored only after the wait's first look found nothing.
    let reads = 0;
    const pool = new Proxy(opened.pool, {
      get: (target, key) =>
        key === "query"
          ? (...args: Parameters<pg.Pool["query"]>) =>
              (target.query as (...a: unknown[]) => Promise<unknown>)(...args).finally(() => reads++)
          : Reflect.get(target, key),
    });
    const database = { ...opened, pool };
    const stored = results(database);
    const started = Date.now();
    const waiting = stored.wait("r4", 60_000);
    await until(() => reads === 1);
    await stored.record(end("r4"));
    expect(await waiting).toEqual(end("r4"));
    expect(Date.now() - started).toBeLessThan(10_000);
    // Its connection cut: it listens again and looks again for every waiter.
    const waitingAgain = stored.wait("r5", 60_000);
    await until(() => reads === 3);
    const killed = await opened.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1", [
      `LISTEN ${runResultsChannel(schema)}`,
    ]);
    expect(killed.rowCount).toBe(1);
    await stored.record(end("r5"));
    expect(await waitingAgain).toEqual(end("r5"));
    expect(await stored.wait("never", 50)).toBeUndefined();
    // A stop answers a wait at once (as timed out), not at its timer.
    const atStop = stored.wait("at-stop", 3_600_000);
    await stored.close();
    expect(await atStop).toBeUndefined();
  });

  it("answers pending for a run stored in the hand-off inbox or in this gateway's inbox, not for one set aside", async () => {
    const { database, schema } = await open();
    const stored = results(database, {
      pendingHere: (runId) => (runId === "here" ? { sessionKey: "agent:main:main", queuedAt: 5 } : undefined),
    });
    const payload = { sessionKey: "agent:main:hook:ci", text: "hi" };
    await storeHandoff(database.pool, schema, {
      kind: "hook",
      dedupeKey: "hook:a",
      runId: "handed",
      payload,
      receivedBy: "gw-2",
    });
    await storeHandoff(database.pool, schema, {
      kind: "hook",
      dedupeKey: "hook:b",
      runId: "aside",
      payload,
      receivedBy: "gw-2",
    });
    await database.pool.query("UPDATE inbound_handoff SET set_aside_at = now() WHERE run_id = 'aside'");
    expect(await stored.pending("here")).toEqual({ sessionKey: "agent:main:main", queuedAt: 5 });
    expect(await stored.pending("handed")).toMatchObject({ sessionKey: "agent:main:hook:ci" });
    expect(await stored.pending("aside")).toBeUndefined();
    expect(await stored.pending("nobody")).toBeUndefined();
  });

  it("prunes the ends older than the cutoff, at most once per period however often it is asked", async () => {
    const { database, transactions } = await open();
    let now = 1_000_000;
    const stored = results(database, { now: () => now, pruneEveryMs: 60_000, endBeforeDoneMs: 0 });
    await stored.record(end("old", { endedAt: 1_000 }));
    await stored.record(end("young", { endedAt: 3_000 }));
    const prunes = () => transactions.filter((t) => t === "BEGIN/COMMIT").length;
    stored.prune(2_000);
    await until(async () => (await stored.get("old")) === undefined);
    await stored.record(end("old", { endedAt: 1_000 }));
    stored.prune(2_000);
    now += 59_999;
    stored.prune(2_000);
    expect(prunes(), "asked twice within the period: no statement").toBe(1);
    now += 1;
    stored.prune(2_000);
    expect(prunes()).toBe(2);
    await until(async () => (await stored.get("old")) === undefined);
    expect(await stored.get("young")).toMatchObject({ runId: "young" });
  });

  it("keeps the end of a run whose handled key is the oldest kept, though the run ended just before its key was marked done", async () => {
    const { database } = await open();
    const now = 10 * 24 * 3_600_000;
    const stored = results(database, { now: () => now });
    await stored.record(end("kept", { endedAt: now - 1 }));
    await stored.record(end("day-old", { endedAt: now - END_BEFORE_DONE_MS - 1 }));
    stored.prune(now); // the inbox keeps keys from `now`: "kept"'s key, marked done 1 ms after its end
    await until(async () => (await stored.get("day-old")) === undefined);
    expect(await stored.get("kept")).toMatchObject({ runId: "kept", status: "ok" });
  });
});
