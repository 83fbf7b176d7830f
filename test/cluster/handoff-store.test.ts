// A standby's store into the hand-off inbox (src/cluster/handoff-sql.ts `storeHandoff`, migration
// 0011 `handoff_store`) on a real PostgreSQL schema: one statement a post, NOTIFY included; a key the
// owner's inbox knows stores nothing and wakes nobody; a key handled before the cutoff is new again;
// a repeat racing the owner's intake-and-delete commit is answered `taken`.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { handoffChannel, storeHandoff } from "../../src/cluster/handoff-sql.js";
import { applyBatch } from "../../src/state/postgres/batch-sql.js";
import type { PostgresDatabase } from "../../src/state/postgres/database.js";
import { useFreshDatabases } from "../support/fresh-database.js";
import { until } from "../support/gateway-child.js";
import { countQueries, waitsOnLock } from "../support/pg-watch.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const freshDatabase = useFreshDatabases(db);
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

const row = (key: string) => ({
  kind: "hook" as const,
  dedupeKey: key,
  runId: `run-${key}`,
  payload: { key },
  receivedBy: "gw-s",
});

/** A migrated schema and the payloads NOTIFYed on its hand-off channel. */
async function schemaListened(): Promise<{ database: PostgresDatabase; heard: string[] }> {
  const database = await freshDatabase();
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  closing.push(() => listener.end());
  const heard: string[] = [];
  listener.on("notification", (n) => heard.push(n.payload ?? ""));
  await listener.query(`LISTEN ${handoffChannel(database.schema)}`);
  return { database, heard };
}

describe("a standby's store into the hand-off inbox", () => {
  it("stores a row with its NOTIFY in one statement; a key the owner's inbox knows stores nothing and wakes nobody; one handled before the cutoff is new again", async () => {
    const { database, heard } = await schemaListened();
    const { pool, schema } = database;
    const inbox = (key: string, value: object) =>
      pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('inbox', $1, $2)", [key, JSON.stringify(value)]);
    await inbox("hook:known", { status: "pending", runId: "run-first", sessionKey: "s" });
    await inbox("hook:old", { status: "done", at: 1_000, runId: "run-old" });
    const sent = countQueries(pool);
    expect(await storeHandoff(pool, schema, row("hook:new"), 5_000)).toMatchObject({
      status: "new",
      runId: "run-hook:new",
    });
    expect(sent).toHaveLength(1);
    expect(await storeHandoff(pool, schema, row("hook:new"), 5_000)).toMatchObject({
      status: "duplicate",
      runId: "run-hook:new",
    });
    expect(await storeHandoff(pool, schema, row("hook:known"), 5_000)).toEqual({
      status: "taken",
      inbox: { status: "pending", runId: "run-first", sessionKey: "s" },
    });
    // Handled at 1,000 ms, the cutoff at 5,000: forgotten, as the owner's inbox forgets it.
    expect(await storeHandoff(pool, schema, row("hook:old"), 5_000)).toMatchObject({ status: "new" });
    // Without a cutoff the inbox is not read (a platform update: the owner's intake dedupes it).
    expect(await storeHandoff(pool, schema, row("hook:known"), undefined)).toMatchObject({ status: "new" });
    expect(sent).toHaveLength(5);
    const left = await pool.query("SELECT dedupe_key FROM inbound_handoff ORDER BY id");
    expect(left.rows.map((r) => r.dedupe_key)).toEqual(["hook:new", "hook:old", "hook:known"]);
    // NOTIFYs arrive in commit order: once this marker is heard, every earlier one was.
    await pool.query("SELECT pg_notify($1, 'end')", [handoffChannel(schema)]);
    await until(() => heard.includes("end"), 10_000);
    expect(heard).toEqual(["", "", "", "end"]);
  });

  it("answers `taken` to a repeat that waits on the owner's intake-and-delete commit, storing nothing and waking nobody", async () => {
    const { database, heard } = await schemaListened();
    const { pool, schema } = database;
    expect(await storeHandoff(pool, schema, row("hook:race"), 5_000)).toMatchObject({ status: "new" });
    const { rows } = await pool.query<{ id: string }>("SELECT id FROM inbound_handoff WHERE dedupe_key = 'hook:race'");
    // The owner's batch (the row writer's own statement): the intake's inbox row and the hand-off
    // row's delete, held open before its commit.
    const owner = await pool.connect();
    await owner.query("BEGIN");
    const taken = { status: "pending", runId: "run-hook:race", sessionKey: "s" };
    const change = { tbl: "inbox", key: "hook:race", json: JSON.stringify(taken), part: null, moved: false };
    await applyBatch(owner, [], [change], undefined, { results: "[]", handoffs: [rows[0]!.id] });
    // The repeat's INSERT meets the deleted-but-uncommitted row and waits for the owner's commit.
    const repeat = storeHandoff(pool, schema, row("hook:race"), 5_000);
    await until(() => waitsOnLock(pool, "query LIKE $1", "%handoff_store(%"));
    await owner.query("COMMIT");
    owner.release();
    expect(await repeat).toEqual({ status: "taken", inbox: taken });
    expect((await pool.query("SELECT dedupe_key FROM inbound_handoff")).rows).toEqual([]);
    await pool.query("SELECT pg_notify($1, 'end')", [handoffChannel(schema)]);
    await until(() => heard.includes("end"), 10_000);
    expect(heard).toEqual(["", "end"]);
  });
});
