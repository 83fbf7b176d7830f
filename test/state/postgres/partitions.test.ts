// Partitions on PostgreSQL (migration 0008, docs/scale-out.md "The way there", step 1): a row of a
// per-session table is stored under its session's partition, `partOf(key, the schema's count)`, a
// row of no session under none, a transcript under the partition of the session appending it; rows
// stored before the migration get theirs from the owner at its start, in batches, once.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { partOf } from "../../../src/routing/partition.js";
import { createPostgresTranscripts } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { openStateBackend } from "../../../src/state/open-state-backend.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { loadMigrations, migrate } from "../../../src/state/postgres/migrations.js";
import { BACKFILL_BATCH } from "../../../src/state/postgres/partitions.js";
import { openPostgresPool } from "../../../src/state/postgres/pool.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { StatePort } from "../../../src/state/state-port.js";
import {
  cronTable as global,
  outboxTable as perSession,
  sessionsTable as sessions,
} from "../../support/part-tables.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

async function query<T extends pg.QueryResultRow>(schema: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: db.url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const partsOf = async (schema: string, tbl: string) =>
  Object.fromEntries(
    (
      await query<{ key: string; part: number | null }>(schema, "SELECT key, part FROM state_rows WHERE tbl = $1", [
        tbl,
      ])
    ).map((row) => [row.key, row.part]),
  );

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** The schema as a version before partitions left it: migrated up to 0007. */
async function schemaAtVersion7(schema: string): Promise<void> {
  const pool = openPostgresPool({ url: db.url, schema, logger });
  try {
    await migrate(pool, { schema, logger, migrations: loadMigrations().slice(0, 7) });
  } finally {
    await pool.end();
  }
}

/** The port as the gateway opens it (the transcripts' backfill runs here). */
async function openAsGateway(schema: string): Promise<{ state: StatePort }> {
  const backend = await openStateBackend({
    config: { backend: "postgres", postgres: { url: db.url, schema, poolSize: 2 } },
    env: {},
    dir: "/nonexistent",
    logger,
  });
  closing.push(() => backend.state.close());
  return { state: backend.state };
}

describe("partitions on PostgreSQL", () => {
  it("stores each row under its session's partition by the schema's count, a row of no session under none", async () => {
    const schema = freshSchema();
    // The count is the schema's, fixed at its first use: here a schema made with 16.
    await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = '16' WHERE name = 'partitions'");
    const database = await openDatabase(schema);
    expect(database.partitions).toBe(16);
    const state = openPostgresState(database, { logger });
    const [items, store, jobs] = [
      await state.table(perSession),
      await state.table(sessions),
      await state.table(global),
    ];
    await state.commit(() => {
      void items.set("r1:reply", { session: "agent:main:telegram:dm:42", text: "hi" });
      void items.set("r2:reply", { text: "no session" });
      void store.set("agent:main:main", { text: "main" });
      void jobs.set("nightly", { session: "agent:main:main", text: "a job" });
    });
    expect(await partsOf(schema, "outbox")).toEqual({
      "r1:reply": partOf("agent:main:telegram:dm:42", 16),
      "r2:reply": null,
    });
    expect(await partsOf(schema, "sessions:main")).toEqual({ "agent:main:main": partOf("agent:main:main", 16) });
    expect(await partsOf(schema, "cron-jobs")).toEqual({ nightly: null });

    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    await transcripts.append("s-dm", { role: "user", content: "hi" }, { sessionKey: "agent:main:telegram:dm:42" });
    // The session under a new key (a renamed main key): its next append moves the transcript to that key's part.
    await transcripts.append("s-dm", { role: "user", content: "again" }, { sessionKey: "agent:main:main" });
    // An append that names no session leaves the part as it is.
    await transcripts.append("s-dm", { role: "user", content: "third" });
    await transcripts.append("s-none", { role: "user", content: "no session named" });
    const rows = await query<{ name: string; part: number | null }>(
      schema,
      "SELECT name, part FROM transcripts ORDER BY name",
    );
    expect(rows).toEqual([
      { name: "s-dm", part: partOf("agent:main:main", 16) },
      { name: "s-none", part: null },
    ]);
    await state.close();
  });

  it("gives rows and transcripts stored before migration 0008 their parts at the owner's start, in batches, and only once", async () => {
    const schema = freshSchema();
    await schemaAtVersion7(schema);
    // What an older gateway left: sessions (more than one batch), items with and without a session, a
    // cron job, a transcript of a live session and an archive no session points at.
    const count = BACKFILL_BATCH * 2 + 5;
    const keys = Array.from({ length: count }, (_, i) => `agent:main:telegram:dm:${i}`);
    await query(
      schema,
      `INSERT INTO state_rows (tbl, key, value)
       SELECT 'sessions:main', k, jsonb_build_object('text', k, 'sessionId', 'sid-' || n) FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n)`,
      [keys],
    );
    await query(
      schema,
      `INSERT INTO state_rows (tbl, key, value) VALUES
        ('outbox', 'r1:reply', '{"session": "agent:main:telegram:dm:7", "text": "hi"}'),
        ('outbox', 'r2:reply', '{"text": "none"}'),
        ('cron-jobs', 'nightly', '{"text": "job"}')`,
    );
    await query(
      schema,
      `INSERT INTO transcripts (agent, name, header) VALUES
        ('main', 'sid-3', '{"id": "sid-3"}'), ('main', 'sid-3-topic-9', '{"id": "sid-3"}'),
        ('main', 'old.deleted.1', '{"id": "sid-gone"}')`,
    );
    // More transcripts than a batch, their ids past 999 (read as text, "1000" sorts before "999").
    await query(
      schema,
      `INSERT INTO transcripts (agent, name, header)
       SELECT 'main', 'many-' || n, jsonb_build_object('id', 'sid-' || n) FROM generate_series(10, $1::int) n`,
      [count],
    );

    const first = await openAsGateway(schema);
    // The transcripts at the start, before any table opens; the rows as each table opens.
    const transcriptParts = () =>
      query<{ name: string; part: number | null }>(
        schema,
        "SELECT name, part FROM transcripts WHERE name NOT LIKE 'many-%' ORDER BY name",
      );
    const of = (key: string) => partOf(key);
    const many = await query<{ name: string; part: number | null }>(
      schema,
      "SELECT name, part FROM transcripts WHERE name LIKE 'many-%'",
    );
    expect(many).toHaveLength(count - 9);
    for (const { name, part } of many)
      expect(part, name).toBe(of(`agent:main:telegram:dm:${Number(name.slice(5)) - 1}`));
    expect(await transcriptParts()).toEqual([
      { name: "old.deleted.1", part: null },
      { name: "sid-3", part: of("agent:main:telegram:dm:2") },
      { name: "sid-3-topic-9", part: of("agent:main:telegram:dm:2") },
    ]);
    for (const spec of [sessions, perSession, global]) await first.state.table(spec);
    const stored = await partsOf(schema, "sessions:main");
    expect(Object.keys(stored)).toHaveLength(count);
    for (const key of keys) expect(stored[key], key).toBe(of(key));
    expect(await partsOf(schema, "outbox")).toEqual({ "r1:reply": of("agent:main:telegram:dm:7"), "r2:reply": null });
    expect(await partsOf(schema, "cron-jobs")).toEqual({ nightly: null });
    await first.state.close();

    // A second start finds nothing left to do: no row is written again (a written row gets a new xmin).
    const versions = () =>
      query<{ v: string }>(
        schema,
        "SELECT string_agg(xmin::text, ',' ORDER BY x) AS v FROM (SELECT xmin, tbl || key AS x FROM state_rows UNION ALL SELECT xmin, name FROM transcripts) r",
      );
    const before = await versions();
    const second = await openAsGateway(schema);
    for (const spec of [sessions, perSession, global]) await second.state.table(spec);
    await second.state.close();
    expect(await versions()).toEqual(before);
  });
});
