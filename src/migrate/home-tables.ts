/**
 * Which tables of the state port a home holds, and where the local backend keeps each one. The
 * migrator copies whatever this lists (and, from PostgreSQL, every table it finds there), so a new
 * store only adds its name here, nothing else in the migrator: a table named `<name>` lives at
 * `state/<name>.json` (the gateway's core opens the inbox, outbox, sub-agent registry, pairing, tool-call record,
 * channel state (adapters' offsets and device credentials) and cron run logs this way), `sessions:<agentId>` at the agent's store file; others are listed below (cron jobs). `test/state/migrate/home-tables.test.ts`
 * fails when the gateway opens a table this list misses.
 */
import path from "node:path";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { resolveStorePath } from "../config/paths.js";
import { migrateJobsFile } from "../cron/cron-job-store.js";
import { agentStoreLocations } from "../sessions/store-locations.js";
import type { TableSpec } from "../state/state-port.js";

/** Tables the gateway keeps in `state/<name>.json` on the local backend. */
const STATE_DIR_TABLES = ["inbox", "outbox", "subagents", "pairing", "tool-calls", "channels", "cron-runs"] as const;

/** Tables kept elsewhere in the home, and how an earlier version's file of theirs is read as rows. */
const OTHER_TABLES: Record<string, { file: string; migrate?: TableSpec<object>["migrate"] }> = {
  "cron-jobs": { file: "cron/jobs.json", migrate: migrateJobsFile },
};

const SESSIONS = "sessions:";

/** Where a home is and how its config places the session stores. */
export interface HomeLayout {
  config: Pick<Config, "agents" | "session">;
  paths: SwitchboardPaths;
  /** the user's home directory, for `~` in `session.store` */
  homeDir: string;
}

/** The agent of a session table (`sessions:<agentId>`), or undefined for another table. */
export function agentOfTable(name: string): string | undefined {
  return name.startsWith(SESSIONS) ? name.slice(SESSIONS.length) : undefined;
}

/** Where the local backend keeps table `name` of this home. */
export function localTablePath(layout: HomeLayout, name: string): string {
  const agentId = agentOfTable(name);
  const { config, paths, homeDir } = layout;
  if (agentId !== undefined) return resolveStorePath(paths.home, agentId, config.session.store, homeDir);
  const other = OTHER_TABLES[name];
  return path.join(paths.home, ...(other ? [other.file] : ["state", `${name}.json`]));
}

/** The tables of a local home: every agent's session store (configured or found on disk) and the `state/` tables. */
export async function localHomeTables(layout: HomeLayout): Promise<string[]> {
  const stores = await agentStoreLocations(layout.config, layout.paths, layout.homeDir);
  return [...stores.map((store) => `${SESSIONS}${store.agentId}`), ...STATE_DIR_TABLES, ...Object.keys(OTHER_TABLES)];
}

/**
 * A spec that takes every row as it is stored: the migrator copies rows, it does not interpret
 * them (the stores check them when a gateway opens the copy).
 */
export function rawTableSpec(name: string, file: string): TableSpec<object> {
  return {
    name,
    path: file,
    what: `state table ${name}`,
    invalidRows: "keep",
    // An earlier version's whole-file format is read as rows, as the store itself would.
    ...(OTHER_TABLES[name]?.migrate && { migrate: OTHER_TABLES[name].migrate }),
    check: (_key, row) => (typeof row === "object" && row !== null ? { value: row } : { error: "not a JSON object" }),
  };
}
