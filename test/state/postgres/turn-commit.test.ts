// On PostgreSQL a turn's transcript events and the state rows written in the same step (session row,
// outbox item, inbox mark) are one transaction: the transcripts share the state port's group commit.
// A batch whose one statement fails leaves neither the rows nor the events; one that commits has both.
// On the gateway's fenced database: fenced-turn-commit.test.ts.
import { describe, expect, it } from "vitest";
import { applyBatch } from "../../../src/state/postgres/batch-sql.js";
import { freshSchema } from "../../support/postgres.js";
import { useTurnCommitTables } from "../../support/turn-commit-tables.js";

const { openBoth, stored } = useTurnCommitTables();

describe("a turn's commit on PostgreSQL", () => {
  it("stores the transcript events and the rows written in one step together, in one statement", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, outbox, state, transactions } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    transactions.length = 0;
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: "hello", runId: "r1" }),
      transcripts.append("s1", { role: "assistant", content: "again", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("r1:reply", { text: "hello" }),
    ]);
    // No BEGIN and COMMIT: one statement is atomic on its own.
    expect(transactions).toEqual(["one statement"]);
    await state.close();
    expect(await stored(schema)).toEqual({ messages: ["hi", "hello", "again"], sessions: ["k"], outbox: ["r1:reply"] });
  });

  it("leaves neither the rows nor the events when one statement of the batch fails", async () => {
    const schema = freshSchema();
    const { database, transcripts, sessions, outbox } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    // A real failure inside the server: a trigger refuses the outbox row "boom".
    await database.pool.query(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN IF NEW.key = 'boom' THEN RAISE EXCEPTION 'refused %', NEW.key; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON state_rows FOR EACH ROW EXECUTE FUNCTION refuse_boom();`);
    const writes = [
      transcripts.append("s1", { role: "assistant", content: "lost", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("boom", { text: "lost" }),
    ];
    for (const write of writes) await expect(write).rejects.toThrow("refused boom");
    expect(await stored(schema)).toEqual({ messages: ["hi"], sessions: [], outbox: [] });
  });

  it("keeps one transcript's order across batches, and a row removed and written again in the same batch", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, state } = await openBoth(schema);
    await sessions.set("k", { text: "first" });
    const writes = [transcripts.append("s1", { role: "user", content: "1" })];
    writes.push(sessions.delete("k"), sessions.set("k", { text: "again" }));
    // Queued while the batch above commits: the next batch.
    await Promise.resolve();
    writes.push(transcripts.append("s1", { role: "assistant", content: "2" }));
    writes.push(transcripts.append("s1", { role: "user", content: "3" }));
    await Promise.all(writes);
    await state.close();
    const page = await stored(schema);
    expect(page.messages).toEqual(["1", "2", "3"]);
    expect(page.sessions).toEqual(["k"]);
  });

  it("serves a warm transcript's newest messages from memory, the same as the rows, appends and archives included", async () => {
    const { transcripts, transactions } = await openBoth();
    await transcripts.append("s1", { role: "user", content: "1" });
    expect((await transcripts.recent("s1", 10)).map((m) => m.content)).toEqual(["1"]);
    // Appended while a read of a cold transcript runs: that read is not kept, so nothing is doubled or lost.
    const [cold] = await Promise.all([
      transcripts.recent("s2", 10),
      transcripts.append("s2", { role: "user", content: "a" }),
    ]);
    expect(cold.length).toBeLessThanOrEqual(1);
    await transcripts.append("s1", { role: "assistant", content: "2" });
    transactions.length = 0;
    const warm = await transcripts.recent("s1", 10);
    expect(transactions).toEqual([]);
    expect(warm).toEqual((await transcripts.readTail("s1", { limit: 10, includeTools: true })).messages);
    expect((await transcripts.recent("s2", 10)).map((m) => m.content)).toEqual(["a"]);
    await transcripts.remove("s1");
    expect(await transcripts.recent("s1", 10)).toEqual([]);
  });

  it("stores a string cut through an emoji and a NUL as U+FFFD, without failing the other writes of the batch", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, outbox, state } = await openBoth(schema);
    const cut = "cut emoji \u{1F600}".slice(0, -1); // a lone high surrogate
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: cut, runId: "r1" }),
      sessions.set("k", { text: "nul \u0000 and a low \udc00 alone" }),
      // Written by a person: a backslash and "u0000" are text, not an escape, and stay as they are.
      outbox.set("r1:reply", { text: "C:\\u0000dir \u{1F600}" }),
    ]);
    await state.close();
    const { transcripts: reread, sessions: rows, outbox: items } = await openBoth(schema);
    const page = await reread.readTail("s1", { limit: 10, includeTools: true });
    expect(page.messages.map((m) => m.content)).toEqual(["cut emoji \ufffd"]);
    expect(rows.get("k")).toEqual({ text: "nul \ufffd and a low \ufffd alone" });
    expect(items.get("r1:reply")).toEqual({ text: "C:\\u0000dir \u{1F600}" });
  });

  it("appends a batch's events once when the same batch runs again (a retry after a COMMIT whose answer was lost)", async () => {
    const schema = freshSchema();
    const { database, transcripts } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi" });
    const event = (eid: string, content: string) => ({
      agent: "main",
      name: "s1",
      header: "{}",
      eid,
      bytes: content.length,
      at: Date.now(),
      tool: false,
      json: JSON.stringify({ role: "assistant", content, timestamp: Date.now() }),
      part: null,
    });
    const batch = [
      event("00000000-0000-4000-8000-000000000001", "one"),
      event("00000000-0000-4000-8000-000000000002", "two"),
    ];
    const row = { tbl: "outbox", key: "r1:reply", json: '{"text":"two"}', part: null, moved: false };
    await database.transaction((client) => applyBatch(client, batch, [row]), { single: true });
    await database.transaction((client) => applyBatch(client, batch, [row]), { single: true });
    const { transcripts: reread } = await openBoth(schema);
    const page = await reread.readTail("s1", { limit: 10 });
    expect(page.messages.map((m) => m.content)).toEqual(["hi", "one", "two"]);
  });
});
