// A migrated database on a fresh schema of the run's PostgreSQL, closed after each test.
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { closedAfterEach } from "./closed-after-each.js";
import { freshSchema, type PostgresTestContext } from "./postgres.js";

/** Opens databases on fresh schemas of `db` (the file's `usePostgres()`), each closed after its test; no health probe. */
export function useFreshDatabases(db: PostgresTestContext): () => Promise<PostgresDatabase> {
  return closedAfterEach(() =>
    openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger(), probeEveryMs: 0 }),
  );
}
