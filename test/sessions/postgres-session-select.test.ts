// A standby's session list reads its first page and "the rest" in one snapshot
// (src/sessions/postgres-session-select.ts, docs/scale-out.md "Reads on a standby"): a session the
// owner updates between the two statements is still listed, once.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresSessionSelect } from "../../src/sessions/postgres-session-select.js";
import { createSessionKeyCache } from "../../src/sessions/session-key-cache.js";
import type { PostgresDatabase } from "../../src/state/postgres/database.js";
import { useFreshDatabases } from "../support/fresh-database.js";
import { usePostgres } from "../support/postgres.js";

const freshDatabase = useFreshDatabases(usePostgres());

/** `database` whose transactions' clients run `between` (on another connection) after their first statement. */
function racing(database: PostgresDatabase, between: () => Promise<unknown>) {
  let statements = 0;
  const wrapped: PostgresDatabase = {
    ...database,
    transaction: (fn, options) =>
      database.transaction((client) => {
        const query = async (text: string, params: unknown[]) => {
          const result = await client.query(text, params);
          if (++statements === 1) await between();
          return result;
        };
        return fn({ query } as unknown as pg.PoolClient);
      }, options),
  };
  return { database: wrapped, statements: () => statements };
}

describe("a standby's session list across its two statements", () => {
  it("lists every session once even when one is updated between the first page and the rest", async () => {
    const database = await freshDatabase();
    const now = Date.now();
    // 120 group sessions (kept by the filter in code) among 480 dms (dropped by it): the first page of
    // 200 holds 40 groups, not limit 100, so the rest is read.
    for (let i = 0; i < 600; i++) {
      const key = i % 5 === 4 ? `agent:main:telegram:group:-${i}` : `agent:main:telegram:dm:${i}`;
      await database.pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('sessions:main', $1, $2)", [
        key,
        JSON.stringify({ sessionId: `s-${i}`, updatedAt: now - i * 1000 }),
      ]);
    }
    // Between the two statements the owner commits a turn of group -299: listed before it (the 60th
    // group), first after it; below the first page, above the keyset of the rest.
    const race = racing(database, () =>
      database.pool.query(
        "UPDATE state_rows SET value = jsonb_set(value, '{updatedAt}', to_jsonb($1::float8)) WHERE tbl = 'sessions:main' AND key = 'agent:main:telegram:group:-299'",
        [now + 1000],
      ),
    );
    const select = postgresSessionSelect(race.database, {
      agentId: "main",
      keys: createSessionKeyCache({ defaultAgentId: "main", mainKey: "main", scope: "per-sender" }),
    });
    const rows = await select({ kinds: ["group"], limit: 100 });
    expect(race.statements()).toBe(2);
    // The list as committed when it began (one snapshot): the newest 100 groups, -299 among them.
    const before = Array.from({ length: 100 }, (_, n) => `agent:main:telegram:group:-${n * 5 + 4}`);
    expect(rows.map((row) => row.key)).toEqual(before);
  });
});
