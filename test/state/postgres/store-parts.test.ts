// Each store says which session its rows belong to (`TableSpec.sessionOf`), and the PostgreSQL port
// stores them under that session's partition (migration 0008): the inbox's pending rows that know
// their session (routed as they arrived, a client's or a stored turn's), and the tool-call record's rows (the session of
// the turn whose call it is). Sessions, outbox, sub-agents and transcripts: ../../e2e/postgres-partitions.test.ts.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openToolRecord } from "../../../src/agents/tool-record.js";
import { createInbox } from "../../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { partOf } from "../../../src/routing/partition.js";
import { openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";
import { telegramDm } from "../../support/telegram-dm.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function openState(schema: string) {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  const state = openPostgresState(database, { logger });
  closing.push(() => state.close());
  return { state, database };
}

async function parts(database: { pool: pg.Pool }, tbl: string) {
  const { rows } = await database.pool.query<{ key: string; part: number | null }>(
    "SELECT key, part FROM state_rows WHERE tbl = $1 ORDER BY ord",
    [tbl],
  );
  return Object.fromEntries(rows.map((row) => [row.key, row.part]));
}

const OPS = "agent:main:webchat:dm:ops";
const MAIN = "agent:main:main";
const HOOK = "agent:main:hook:deploys";

describe("the stores' rows on PostgreSQL", () => {
  it("stores an inbox row that knows its session (routed, chosen, a stored turn's) under its partition, one that does not under none", async () => {
    const { state, database } = await openState(freshSchema());
    const inbox = await createInbox({ state, path: "inbox.json", logger });
    await inbox.claim("telegram:default:42:1", telegramDm("from Telegram", { messageId: "1" }));
    // Routed as it arrived (inbound/handle-inbound.ts): the row knows its session.
    await inbox.claim("telegram:default:42:2", telegramDm("routed", { messageId: "2" }), { session: MAIN });
    await inbox.claim("webchat:ops:1", telegramDm("from a client", { messageId: "2" }), { sessionKey: OPS });
    const provenance = { kind: "channel" as const, channel: "hook" };
    await inbox.claimTurn("hook:1", {
      source: "hook",
      sessionKey: HOOK,
      text: "deployed",
      owner: false,
      provenance,
      input: {},
    });
    expect(await parts(database, "inbox")).toEqual({
      "telegram:default:42:1": null,
      "telegram:default:42:2": partOf(MAIN),
      "webchat:ops:1": partOf(OPS),
      "hook:1": partOf(HOOK),
    });
    // Handled, a stored turn's row keeps its session (a repeat of its key is answered with its run).
    await inbox.complete("hook:1");
    expect((await parts(database, "inbox"))["hook:1"]).toBe(partOf(HOOK));
  });

  it("stores a tool call under the partition of the session whose turn made it", async () => {
    const { state, database } = await openState(freshSchema());
    const record = await openToolRecord({ state, path: "tool-calls.json" });
    await record.put("run-1:0", {
      runId: "run-1",
      sessionKey: OPS,
      name: "read",
      input: { path: "a" },
      outcome: { ok: true, output: 1 },
    });
    expect(await parts(database, "tool-calls")).toEqual({ "run-1:0": partOf(OPS) });
    const stored = await database.pool.query(
      "SELECT value->>'sessionKey' AS s FROM state_rows WHERE tbl = 'tool-calls'",
    );
    expect(stored.rows).toEqual([{ s: OPS }]);
  });
});
