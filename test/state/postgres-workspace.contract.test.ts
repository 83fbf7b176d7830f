import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
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

describe("PostgreSQL workspace reads", () => {
  it("reads the files asked for together in one statement, each caller getting its own file", async () => {
    const logger = createMemoryLogger();
    const opened = await openPostgresDatabase({
      url: pg.url,
      schema: freshSchema(),
      poolSize: 2,
      logger,
      probeEveryMs: 0,
    });
    const statements: string[] = [];
    const database: PostgresDatabase = {
      ...opened,
      transaction: (fn, options) =>
        opened.transaction((client) => {
          const query = client.query.bind(client) as (text: string, values?: unknown[]) => unknown;
          const counting = Object.assign(Object.create(client), {
            query: (text: string, values?: unknown[]) => {
              statements.push(text);
              return query(text, values);
            },
          });
          return fn(counting);
        }, options),
    };
    try {
      const workspaces = postgresWorkspaces(database);
      const [main, ops] = [workspaces("main"), workspaces("ops")];
      await main.write("AGENTS.md", "main agents");
      await ops.write("AGENTS.md", "ops agents");
      await main.write("memory/a.md", "a note");
      statements.length = 0;
      const texts = await Promise.all([
        main.read("AGENTS.md"),
        ops.read("AGENTS.md"),
        main.read("USER.md"),
        main.read("memory/a.md"),
        ops.read("memory/a.md"),
      ]);
      expect(texts).toEqual(["main agents", "ops agents", undefined, "a note", undefined]);
      expect(statements).toHaveLength(1);
      await expect(main.read("../escape.md")).rejects.toThrow("not a path inside the workspace");
    } finally {
      await opened.close();
    }
  });
});
