// Three tables of the PostgreSQL state port, one per partition rule (docs/scale-out.md "The way
// there", steps 1 and 7): for the partition tests (test/state/postgres/partitions.test.ts,
// postgres-state-parts.test.ts).
import type { TableSpec } from "../../src/state/state-port.js";

/** A row that may name its session. */
export type PartRow = { session?: string; text: string };

/** A per-session table whose rows name their session (as the outbox). */
export const outboxTable: TableSpec<PartRow> = {
  name: "outbox",
  path: "outbox.json",
  what: "item",
  sessionOf: (_key, row) => row.session,
  check: (_key, row) => ({ value: row as PartRow }),
  invalidRows: "keep",
};

/** The session store's rule: the key is the session. */
export const sessionsTable: TableSpec<PartRow> = { ...outboxTable, name: "sessions:main", sessionOf: (key) => key };

/** A table of no session (as cron). */
export const cronTable: TableSpec<PartRow> = { ...outboxTable, name: "cron-jobs", sessionOf: undefined };
