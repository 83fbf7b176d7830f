// The tables of the turn-commit tests (test/state/postgres/turn-commit.test.ts and
// fenced-turn-commit.test.ts): the state port and one agent's transcripts on a fresh schema, plain
// or fenced as the gateway guards it, and what the schema holds afterwards.
import { afterEach } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createGatewayCluster } from "../../src/gateway/core-cluster.js";
import { createMemoryLogger } from "../../src/logger.js";
import { createPostgresTranscripts } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../src/state/state-port.js";
import { countQueries } from "./pg-watch.js";
import { freshSchema, usePostgres } from "./postgres.js";

/** Another gateway taking the writer lease over: an UPDATE of its row, raising the fence. */
export const TAKEOVER = "UPDATE cluster_leases SET owner = 'fb-other', fence = fence + 1 WHERE name = 'schema:writer'";

/** A test file's server, and its databases closed after each test. */
export function useTurnCommitTables() {
  const db = usePostgres();
  const opened: PostgresDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.close()));
  });

  const spec = (name: string): TableSpec<{ text: string }> => ({
    name,
    path: `${name}.json`,
    what: name,
    check: (_key, row) => ({ value: row as { text: string } }),
    invalidRows: "keep",
  });

  /** The state port and one agent's transcripts on one database of a fresh schema, counting its transactions. */
  async function openBoth(schema = freshSchema()) {
    const logger = createMemoryLogger();
    const opening = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
    opened.push(opening);
    const transactions: Array<"one statement" | "BEGIN/COMMIT"> = [];
    const database: PostgresDatabase = {
      ...opening,
      transaction: (fn, options) => {
        transactions.push(options?.single ? "one statement" : "BEGIN/COMMIT");
        return opening.transaction(fn, options);
      },
    };
    const state = openPostgresState(database, { logger });
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    const [sessions, outbox] = await Promise.all([state.table(spec("sessions:main")), state.table(spec("outbox"))]);
    return { database, state, transcripts, sessions, outbox, transactions };
  }

  /** What the schema holds: the transcript's messages and the rows of both tables. */
  async function stored(schema: string) {
    const { transcripts, sessions, outbox } = await openBoth(schema);
    const page = await transcripts.readTail("s1", { limit: 100, includeTools: true });
    return {
      messages: page.messages.map((m) => m.content),
      sessions: [...sessions.keys()],
      outbox: [...outbox.keys()],
    };
  }

  /** The state port and transcripts on the database as the gateway guards it: it holds `schema:writer`. */
  async function openFenced(schema: string) {
    const logger = createMemoryLogger();
    const plain = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
    const lost: unknown[] = [];
    // Beats far apart: a beat is a query of its own, and the counts below are the batches' alone.
    const { config } = parseConfig({
      gateway: { nodeId: "fb-writer" },
      cluster: { leaseTtlMs: 180_000, heartbeatMs: 60_000 },
    });
    const cluster = createGatewayCluster({ config, logger, port: 0, onFencedOut: (lease) => lost.push(lease) });
    const database = await cluster.guard(plain);
    opened.push(database);
    const queries = countQueries(plain.pool);
    const state = openPostgresState(database, { logger });
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    const [sessions, outbox] = await Promise.all([state.table(spec("sessions:main")), state.table(spec("outbox"))]);
    return { plain, database, transcripts, sessions, outbox, lost, queries };
  }
  return { openBoth, openFenced, stored };
}
