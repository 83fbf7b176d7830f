// A PostgreSQL state port and its transcripts refuse writes once closed (docs/scale-out.md "N
// owners"): with `cluster.owners: "many"` a gateway stops its core and opens another when its
// partitions change, in the same process and on the same database, and a turn the stop cut off must
// not write behind the next core's image (its rows, its transcript messages).
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { createPostgresTranscripts } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import { type PartRow as Row, sessionsTable as sessions } from "../../support/part-tables.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

async function openDatabase(): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

const KEY = "agent:main:telegram:dm:42";

describe("a closed PostgreSQL state port", () => {
  it("refuses a write of a table it closed, and the row stays as the last write before the close left it", async () => {
    const database = await openDatabase();
    const state = openPostgresState(database, { logger });
    const table = await state.table<Row>(sessions);
    table.set(KEY, { text: "before the stop" });
    await state.close();
    expect(() => table.set(KEY, { text: "after the stop" })).toThrow('state table "sessions:main" is closed');
    const { rows } = await database.pool.query("SELECT value FROM state_rows WHERE key = $1", [KEY]);
    expect(rows).toEqual([{ value: { text: "before the stop" } }]);
  });

  it("refuses an append to the transcripts it closed; the messages before the close are kept", async () => {
    const database = await openDatabase();
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    const message = (text: string) => ({ role: "user" as const, content: text });
    await transcripts.append("t-1", message("before the stop"), { sessionKey: KEY });
    await transcripts.close();
    await expect(transcripts.append("t-1", message("after the stop"), { sessionKey: KEY })).rejects.toThrow(
      'the transcripts of agent "main" are closed',
    );
    const { rows } = await database.pool.query("SELECT message->>'content' AS text FROM transcript_events");
    expect(rows).toEqual([{ text: "before the stop" }]);
  });
});
