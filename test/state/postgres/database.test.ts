import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSwitchboardError } from "../../../src/errors.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";
import { type PostgresServer, startPostgresServer } from "../../support/postgres-server.js";

const shared = usePostgres();

/** The start failure's message for `url`, which must be a DATABASE_UNAVAILABLE error. */
async function startFailure(url: string): Promise<string> {
  const err = await openPostgresDatabase({ url, schema: freshSchema(), logger: createMemoryLogger() }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isSwitchboardError(err, "DATABASE_UNAVAILABLE"), String(err)).toBe(true);
  const message = (err as Error).message;
  expect(message).not.toContain("\n");
  return message;
}

function withUrl(change: (url: URL) => void): string {
  const url = new URL(shared.url);
  change(url);
  return url.toString();
}

describe("opening a PostgreSQL database", () => {
  it("refuses a wrong password in one line naming the url with the password masked, and the fix", async () => {
    const message = await startFailure(withUrl((url) => (url.password = "not-the-password")));
    expect(message).toContain('refused user "postgres"');
    expect(message).toContain(":***@127.0.0.1");
    expect(message).not.toContain("not-the-password");
    expect(message).toContain("fix the user and password in state.postgres.url (or SWITCHBOARD_DATABASE_URL)");
  });

  it("refuses a missing database, saying how to create it", async () => {
    const message = await startFailure(withUrl((url) => (url.pathname = "/no_such_db")));
    expect(message).toContain('has no database "no_such_db": create it (createdb no_such_db)');
  });

  it("refuses a server that is not there, naming host and port", async () => {
    const message = await startFailure(withUrl((url) => (url.port = "1")));
    expect(message).toMatch(/cannot be reached \(connection refused \(127\.0\.0\.1:1\)\): start the server/);
  });
});

describe("closing a PostgreSQL database", () => {
  it("closes once: a second close (the gateway's after its state's) waits for the first instead of failing", async () => {
    const database = await openPostgresDatabase({
      url: shared.url,
      schema: freshSchema(),
      logger: createMemoryLogger(),
      probeEveryMs: 0,
    });
    await Promise.all([database.close(), database.close()]);
    await expect(database.close()).resolves.toBeUndefined();
    expect(database.pool.ended).toBe(true);
  });
});

describe("a database that goes away and comes back", () => {
  let server: PostgresServer;
  let database: PostgresDatabase;
  const logger = createMemoryLogger();

  beforeAll(async () => {
    if (!shared.url) return; // skipped: PostgreSQL is not installed
    server = await startPostgresServer();
    database = await openPostgresDatabase({
      url: server.url,
      schema: "switchboard",
      logger,
      retry: { firstMs: 20, mostMs: 200 },
      probeEveryMs: 0,
    });
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await server?.destroy();
  });

  it("holds a write until the server is back, commits it once, and logs one line per change", async () => {
    await server.stop("immediate");
    let settled = false;
    const write = database
      .transaction((client) => client.query("INSERT INTO state_rows (tbl, key, value) VALUES ('t', 'k', '1')"))
      .finally(() => (settled = true));
    // Degraded once the first attempt failed; the write is still waiting.
    await expect.poll(() => database.health().ok).toBe(false);
    expect(database.health().reason).toMatch(/connection refused|shutting down|terminat/i);
    expect(settled).toBe(false);
    await server.start();
    await write;
    expect(database.health().ok).toBe(true);
    const rows = await database.pool.query("SELECT key FROM state_rows WHERE tbl = 't'");
    expect(rows.rows).toEqual([{ key: "k" }]);
    const changes = logger.records.filter((record) =>
      /PostgreSQL is (unreachable|reachable again)/.test(record.message),
    );
    expect(changes.map((record) => record.level)).toEqual(["warn", "info"]);
  }, 60_000);
});
