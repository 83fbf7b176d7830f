import { runTranscriptsContract } from "../contracts/transcripts-contract.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { createPostgresTranscripts } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
const pg = usePostgres();
// One schema per contract folder, so a reopen of the folder finds its transcripts.
const schemas = new Map<string, string>();

runTranscriptsContract({
  name: "PostgreSQL",
  open: async (dir, now) => {
    const logger = createMemoryLogger();
    const database = await openPostgresDatabase({
      url: pg.url,
      schema: schemas.get(dir) ?? schemas.set(dir, freshSchema()).get(dir)!,
      poolSize: 4,
      logger,
      probeEveryMs: 0,
    });
    const transcripts = createPostgresTranscripts({ database, agentId: "main", now });
    let closed: Promise<void> | undefined;
    return {
      ...transcripts,
      close: () => {
        closed ??= transcripts.close().then(() => database.close());
        return closed;
      },
    };
  },
});
