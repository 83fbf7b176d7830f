// The retention sweep's archive step on PostgreSQL decides "no session points at this transcript"
// from the database, not from the gateway's image (docs/scale-out.md "The way there", step 1): a
// session another gateway wrote (a row straight into state_rows, which this gateway's image never
// loaded) keeps its transcript, however old, while true orphans and old archives go.
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { openAgentSessions } from "../../../src/sessions/agent-sessions.js";
import { pruneSessions } from "../../../src/sessions/retention/prune-sessions.js";
import { retentionPlan } from "../../../src/sessions/retention/retention-plan.js";
import { postgresTranscriptsOpener } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const DAY = 86_400_000;
const START = Date.parse("2026-01-01T00:00:00Z");
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** Agent main's sessions on a fresh schema, as the gateway opens them, its clock at START. */
async function agentOnPostgres() {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  const state = openPostgresState(database, { logger });
  closing.push(() => state.close());
  const { config } = parseConfig({ session: { archiveRetention: 10 } });
  const sessions = await openAgentSessions({
    agentId: "main",
    storePath: "/nonexistent/agents/main/sessions/sessions.json",
    session: config.session,
    logger,
    now: () => START,
    state,
    openTranscripts: postgresTranscriptsOpener(database),
  });
  closing.push(() => sessions.transcripts.close());
  return { database, sessions, plan: retentionPlan(config.session) };
}

describe("the archive sweep on PostgreSQL", () => {
  it("keeps the transcript of a session only the database knows (another gateway's), purges orphans and old archives", async () => {
    const { database, sessions, plan } = await agentOnPostgres();
    const say = (id: string) => sessions.transcripts.append(id, { role: "user", content: "hi", timestamp: START });
    // This gateway's own session, a transcript no session points at, and one archived by a reset.
    await sessions.store.patch("agent:main:main", () => ({ sessionId: "s-main", updatedAt: START }));
    for (const id of ["s-main", "s-orphan", "s-reset", "s-other"]) await say(id);
    await sessions.transcripts.remove("s-reset", { now: START });
    // Another gateway's session, with a topic transcript it names by its file: rows straight into state_rows.
    await database.pool.query(
      `INSERT INTO state_rows (tbl, key, value) VALUES
        ('sessions:main', 'agent:main:telegram:dm:42', $1), ('sessions:main', 'agent:main:telegram:group:-1:topic:7', $2)`,
      [
        { sessionId: "s-other", updatedAt: START },
        { sessionId: "s-topic", sessionFile: "s-topic-topic-7.jsonl", updatedAt: START },
      ],
    );
    await say("s-topic-topic-7");
    await database.pool.query("UPDATE transcripts SET updated_at = to_timestamp($1 / 1000.0)", [START]);
    expect(sessions.store.get("agent:main:telegram:dm:42")).toBeUndefined(); // not in this gateway's image

    const items = await pruneSessions([sessions], plan, { now: START + 10 * DAY + 1 });

    const gone = items.map((item) => [item.what, item.file.replace(/^.*\//, "")]);
    expect(gone.map(([, name]) => name!.replace(/\.deleted\..*$/, ".deleted")).sort()).toEqual([
      "s-orphan",
      "s-reset.jsonl.deleted",
    ]);
    expect(gone.every(([what]) => what === "archive")).toBe(true);
    const left = (await sessions.transcripts.list()).map((item) => item.id).sort();
    expect(left).toEqual(["s-main", "s-other", "s-topic-topic-7"]);
  });
});
