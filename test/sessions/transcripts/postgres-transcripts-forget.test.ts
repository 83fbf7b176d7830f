// The PostgreSQL transcripts keep a warm session's newest messages in memory (`recent`). A gateway
// that gives a session's partition up forgets them (`forget`, docs/scale-out.md "Partitions adopted
// and evicted one by one"): another gateway appends meanwhile, and when the session comes back its
// transcript is read fresh, never from the stale copy.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { createPostgresTranscripts } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const closing = closersAfterEach();
const KEY = "agent:main:telegram:dm:42";
const message = (text: string) => ({ role: "user" as const, content: text });

/** One gateway's transcripts of agent "main" on `schema`. */
async function gatewayTranscripts(schema: string) {
  const database = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
  const transcripts = createPostgresTranscripts({ database, agentId: "main" });
  closing.push(() => database.close());
  closing.push(() => transcripts.close());
  return transcripts;
}

const texts = (messages: Array<{ content: unknown }>) => messages.map((m) => m.content);

describe("PostgreSQL transcripts: forget", () => {
  it("reads a forgotten transcript fresh: the messages another gateway appended meanwhile are there", async () => {
    const schema = freshSchema();
    const first = await gatewayTranscripts(schema);
    await first.append("t-1", message("one"), { sessionKey: KEY });
    expect(texts(await first.recent("t-1", 10))).toEqual(["one"]);

    // The partition moved: the next holder appends to the session's transcript.
    const next = await gatewayTranscripts(schema);
    await next.append("t-1", message("two"), { sessionKey: KEY });
    // What the first gateway kept is stale until it forgets it (why it must).
    expect(texts(await first.recent("t-1", 10))).toEqual(["one"]);

    first.forget("t-1");
    expect(texts(await first.recent("t-1", 10))).toEqual(["one", "two"]);
    await first.append("t-1", message("three"), { sessionKey: KEY });
    expect(texts(await first.recent("t-1", 10))).toEqual(["one", "two", "three"]);
  });
});
