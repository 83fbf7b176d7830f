// The CLI on a gateway configured for PostgreSQL: `config validate` checks the url's form, `config
// print` masks its password, `doctor` connects and reports the server, the schema version and rows,
// and names the hand-off rows set aside.
import { loadMigrations } from "../../src/state/postgres/migrations.js";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { openStateBackend } from "../../src/state/open-state-backend.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();

async function homeWith(state: Record<string, unknown>): Promise<string> {
  const home = await tempHome();
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify({ state }));
  return home;
}

describe("the CLI with state.backend postgres", () => {
  it("config validate asks for a url, and names a malformed one with the fix", async () => {
    const home = await homeWith({ backend: "postgres" });
    const missing = await cli(["config", "validate"], { home });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'state.postgres.url: required when state.backend is "postgres": set it, or SWITCHBOARD_DATABASE_URL',
    );
    const fromEnv = await cli(["config", "validate"], { home, env: { SWITCHBOARD_DATABASE_URL: "mysql://x@db/y" } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('SWITCHBOARD_DATABASE_URL: starts with "mysql:"');
    const bad = await cli(["config", "validate"], {
      home: await homeWith({ backend: "postgres", postgres: { url: "db:5432" } }),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("state.postgres.url");
    const good = await cli(["config", "validate"], {
      home,
      env: { SWITCHBOARD_DATABASE_URL: "postgres://sb:pw@db/sb" },
    });
    expect(good.code).toBe(0);
  });

  it("config print shows the url with its password masked", async () => {
    const home = await homeWith({ backend: "postgres", postgres: { url: "postgres://sb:hunter2-secret@db:5432/sb" } });
    const { code, stdout } = await cli(["config", "print", "--json"], { home });
    expect(code).toBe(0);
    expect(stdout).not.toContain("hunter2-secret");
    expect(JSON.parse(stdout).state).toEqual({
      backend: "postgres",
      postgres: { url: "postgres://sb:***@db:5432/sb", schema: "switchboard", poolSize: 10 },
    });
  });

  it("doctor connects and reports the server version, the schema version and the rows of each table", async () => {
    const schema = freshSchema();
    const home = await homeWith({ backend: "postgres", postgres: { schema } });
    const env = { SWITCHBOARD_DATABASE_URL: db.url };
    const before = await cli(["doctor"], { home, env });
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(
      new RegExp(
        `state: PostgreSQL 15\\.\\d+.* at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/postgres, schema "${schema}" at version 0`,
      ),
    );
    expect(before.stdout).not.toContain(new URL(db.url).password);

    const backend = await openStateBackend({
      config: { backend: "postgres", postgres: { url: db.url, schema, poolSize: 2 } },
      env: {},
      dir: path.join(home, "state"),
      logger: createMemoryLogger(),
    });
    const table = await backend.state.table({
      name: "outbox",
      path: "outbox.json",
      what: "outbox item",
      check: (_key, row) => ({ value: row as object }),
      invalidRows: "keep",
    });
    await Promise.all([table.set("a", { n: 1 }), table.set("b", { n: 2 })]);
    await backend.state.close();

    const after = await cli(["doctor", "--json"], { home, env });
    expect(JSON.parse(after.stdout).database).toMatchObject({
      backend: "postgres",
      schema,
      schemaVersion: loadMigrations().length,
      rows: { outbox: 2 },
    });
  });

  it("doctor names each hand-off row the owner set aside, with its reason, and warns", async () => {
    const schema = freshSchema();
    const home = await homeWith({ backend: "postgres", postgres: { schema } });
    const env = { SWITCHBOARD_DATABASE_URL: db.url };
    const database = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
    await database.pool.query(
      `INSERT INTO inbound_handoff (kind, account, dedupe_key, payload, received_by, attempts, set_aside_at, set_aside_reason)
       VALUES ('telegram-update', 'ops', 'telegram-update:ops:7', '{}', 'gw-2', 10, now(), 'telegram account "ops" is not running on this gateway'),
              ('hook', '', 'hook:waiting', '{}', 'gw-2', 2, NULL, NULL)`,
    );
    await database.close();
    const text = await cli(["doctor"], { home, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /hand-off row \d+ set aside \(telegram-update ops, telegram-update:ops:7, 10 attempts\): telegram account "ops" is not running on this gateway/,
    );
    expect(text.stdout).not.toContain("hook:waiting");
    expect(text.stdout).toMatch(/warning: 1 inbound message\(s\) another gateway stored for the owner were set aside/);
    // The hint names the schema, so it works pasted into psql.
    expect(text.stdout).toContain(
      `UPDATE "${schema}".inbound_handoff SET set_aside_at = NULL, attempts = 0, created_at = now()`,
    );
    const json = JSON.parse((await cli(["doctor", "--json"], { home, env })).stdout);
    expect(json.database.handoffSetAside).toEqual([
      expect.objectContaining({ kind: "telegram-update", account: "ops", attempts: 10, reason: expect.any(String) }),
    ]);
  });

  it("doctor warns, naming the fix, when the password is refused", async () => {
    const url = new URL(db.url);
    url.password = "wrong-one";
    const home = await homeWith({ backend: "postgres" });
    const { code, stdout } = await cli(["doctor"], { home, env: { SWITCHBOARD_DATABASE_URL: url.toString() } });
    expect(code).toBe(0);
    expect(stdout).toMatch(/warning: the state's database cannot be used: PostgreSQL at .* refused user "postgres"/);
    expect(stdout).not.toContain("wrong-one");
  });
});
