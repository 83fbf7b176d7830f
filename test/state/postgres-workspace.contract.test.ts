import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { postgresWorkspaces } from "../../src/workspace/postgres-workspace.js";
import { runWorkspaceContract } from "../contracts/workspace-contract.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
const pg = usePostgres();
// One schema per contract folder, so a reopen of the folder finds its files.
const schemas = new Map<string, string>();

runWorkspaceContract({
  name: "PostgreSQL",
  open: async (dir) => {
    const schema = schemas.get(dir) ?? schemas.set(dir, freshSchema()).get(dir)!;
    const logger = createMemoryLogger();
    const database = await openPostgresDatabase({ url: pg.url, schema, poolSize: 2, logger, probeEveryMs: 0 });
    let closed: Promise<void> | undefined;
    return { workspaces: postgresWorkspaces(database), close: () => (closed ??= database.close()) };
  },
});
