// A standby's session lists in SQL (docs/scale-out.md "Reads on a standby"): the filters a stored
// row answers (recent, spawnedBy, label, sessionId), the order (newest turn first, ties in stored
// order) and the limit are PostgreSQL's; what needs the parsed key or the title (kinds, `keep`) is
// checked here, on a first page of twice the limit (200 at least) and, when that did not fill the
// limit, on the rest after its last row (keyset paging): two statements at most, in one
// REPEATABLE READ READ ONLY transaction (one snapshot).
import type { PostgresDatabase } from "../state/postgres/database.js";
import { checkWith } from "../state/schema-check.js";
import { SessionEntrySchema } from "./session-entry.js";
import type { SessionKeyCache } from "./session-key-cache.js";
import type { SelectSessions, SessionFilter, SessionRow } from "./session-select.js";
import { keepUpTo } from "./session-select.js";
import { sessionsTableName } from "./session-table.js";

/** Rows read first when a limit is asked: enough that a filter in code rarely needs the rest. */
const MIN_PAGE = 200;
const AT = "(value->>'updatedAt')::float8";

interface Page {
  rows: Array<{ key: string; value: unknown; ord: string; at: number }>;
}

/** The statement for one page of table `tbl` after `from` (the last row of the page before). */
function pageQuery(
  tbl: string,
  filter: SessionFilter,
  since: number,
  page: number | undefined,
  from?: Page["rows"][0],
) {
  const params: unknown[] = [tbl];
  const where = ["tbl = $1", "jsonb_typeof(value->'updatedAt') = 'number'"];
  const add = (sql: (n: string) => string, value: unknown) => where.push(sql(`$${params.push(value)}`));
  if (filter.activeMinutes !== undefined) add((n) => `${AT} >= ${n}`, since);
  if (filter.spawnedBy !== undefined) add((n) => `value->>'spawnedBy' = ${n}`, filter.spawnedBy);
  if (filter.label !== undefined) add((n) => `value->>'label' = ${n}`, filter.label);
  if (filter.sessionId !== undefined) add((n) => `value->>'sessionId' = ${n}`, filter.sessionId);
  if (from) {
    const at = `$${params.push(from.at)}`;
    add((n) => `(${AT} < ${at} OR (${AT} = ${at} AND ord > ${n}))`, from.ord);
  }
  const limit = page === undefined ? "" : ` LIMIT $${params.push(page)}`;
  const text = `SELECT key, value, ord, ${AT} AS at FROM state_rows WHERE ${where.join(" AND ")} ORDER BY ${AT} DESC, ord${limit}`;
  return { text, params };
}

/** Agent `agentId`'s sessions selected in PostgreSQL, parsed with `keys`; rows the schema refuses are no sessions (as in the store). */
export function postgresSessionSelect(
  database: PostgresDatabase,
  deps: { agentId: string; keys: SessionKeyCache; now?: () => number },
): SelectSessions {
  const check = checkWith(SessionEntrySchema);
  const tbl = sessionsTableName(deps.agentId);
  const sessionsOf = (rows: Page["rows"], filter: SessionFilter): SessionRow[] =>
    rows.flatMap(({ key, value }) => {
      const checked = check(key, value);
      const parsed = deps.keys.parsedKey(key);
      if (!("value" in checked) || !parsed || (filter.kinds && !filter.kinds.includes(parsed.kind))) return [];
      return [{ key, parsed, entry: checked.value }];
    });
  return async (filter, keep = () => true) => {
    const since = (deps.now ?? Date.now)() - (filter.activeMinutes ?? 0) * 60_000;
    const limit = filter.limit ?? Infinity;
    // Both statements in one snapshot: a row updated between them would move above the keyset and be in neither.
    return database.transaction(
      async (client) => {
        let page = filter.limit === undefined ? undefined : Math.max(MIN_PAGE, filter.limit * 2);
        const kept: SessionRow[] = [];
        let from: Page["rows"][0] | undefined;
        for (;;) {
          const { text, params } = pageQuery(tbl, filter, since, page, from);
          const { rows } = await client.query<Page["rows"][0]>(text, params);
          kept.push(...keepUpTo(sessionsOf(rows, filter), keep, limit - kept.length));
          from = rows.at(-1);
          if (page === undefined || rows.length < page || kept.length >= limit) return kept;
          page = undefined;
        }
      },
      { snapshot: true },
    );
  };
}
