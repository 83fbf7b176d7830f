import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { TAIL_QUERY, postgresTranscriptsOpener } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { usePostgres } from "../support/postgres.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
const pg = usePostgres();

describe("PostgreSQL transcripts", () => {
  let database: PostgresDatabase;
  beforeAll(async () => {
    if (!pg.url) return;
    database = await openPostgresDatabase({
      url: pg.url,
      schema: pg.schema,
      logger: createMemoryLogger(),
      probeEveryMs: 0,
    });
  });
  afterAll(async () => database?.close());

  it("reads the tail of a 200,000-event transcript along the (session, seq) index, touching one page of rows", async () => {
    const t = postgresTranscriptsOpener(database)({ agentId: "main", dir: "", logger: createMemoryLogger() });
    await t.append("long", { role: "user", content: "first" });
    await database.pool.query(
      `WITH t AS (UPDATE transcripts SET last_seq = 200000 WHERE name = 'long' RETURNING tid)
       INSERT INTO transcript_events (tid, seq, tool, message)
       SELECT tid, n, n % 3 = 0, jsonb_build_object('role', 'user', 'content', 'm' || n, 'timestamp', n) FROM t, generate_series(2, 200000) n`,
    );
    await database.pool.query("ANALYZE transcript_events");
    const page = await t.readTail("long", { limit: 20 });
    expect(page.messages.at(-1)?.content).toBe("m200000");
    expect(page.hasMore).toBe(true);
    const { rows: tid } = await database.pool.query("SELECT tid FROM transcripts WHERE name = 'long'");
    const { rows } = await database.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${TAIL_QUERY}`, [
      tid[0].tid,
      200001,
      false,
      21,
    ]);
    const scan = rows[0]["QUERY PLAN"][0].Plan.Plans[0];
    expect(scan["Node Type"]).toBe("Index Scan");
    expect(scan["Scan Direction"]).toBe("Backward");
    expect(scan["Actual Rows"]).toBe(21);
    expect(scan["Rows Removed by Filter"]).toBeLessThanOrEqual(11); // the tool rows skipped on the way
  }, 120_000);
});
