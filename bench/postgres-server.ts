// The benchmarks' PostgreSQL: a private server started as the tests start theirs
// (test/support/postgres-server.ts), but durable (fsync on, as a production server runs), so its
// figures compare with the local store's, which syncs every acknowledged write.
import pg from "pg";
import { findPostgresBinaries, startPostgresServer } from "../test/support/postgres-server.js";

/** A running bench server: its url, a fresh schema per scenario, and the round trips the process made. */
export interface BenchPostgres {
  url: string;
  /** an unused schema name (the gateway creates and migrates it at open) */
  freshSchema(): string;
  /** queries sent by every pg client of this process so far (one round trip each) */
  roundTrips(): number;
  stop(): Promise<void>;
}

let sent = 0;
let counting = false;

/** Counts every query a pg client sends (the gateway's pool included): a query is one round trip. */
function countRoundTrips(): void {
  if (counting) return;
  counting = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    sent++;
    return query.apply(this, args);
  };
}

/** Why the PostgreSQL columns cannot be measured here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  const bins = findPostgresBinaries();
  return "missing" in bins ? bins.missing : undefined;
}

/** Starts the bench's server (durable: fsync and full page writes on). */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  const server = await startPostgresServer(["fsync=on", "full_page_writes=on"]);
  countRoundTrips();
  let schemas = 0;
  return {
    url: server.url,
    freshSchema: () => `bench_${process.pid}_${++schemas}`,
    roundTrips: () => sent,
    stop: () => server.destroy(),
  };
}
