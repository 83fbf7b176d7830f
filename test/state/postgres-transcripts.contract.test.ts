import { runTranscriptsContract } from "../contracts/transcripts-contract.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { createPostgresTranscripts } from "../../src/state/postgres/postgres-transcripts.js";
import { usePostgres } from "../support/postgres.js";
import { schemaOf } from "./postgres/open-postgres-state.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
const pg = usePostgres();

runTranscriptsContract({
  name: "PostgreSQL",
  open: async (dir, now) => {
    const logger = createMemoryLogger();
    const database = await openPostgresDatabase({
      url: pg.url,
      schema: schemaOf(dir),
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
