import type pg from "pg";
import { SwitchboardError, isSwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { connectionReason, isConnectionError, startFailureLine } from "./database-errors.js";
import { maskDatabaseUrl } from "../../config/database-url.js";
import { loadMigrations, migrate, readSchemaVersion } from "./migrations.js";
import { readPartitions } from "./partition-count.js";
import { type PostgresTarget, openPostgresPool } from "./pool.js";

/** Whether the database answers, and if not, why and since when (`/healthz` shows it). */
export interface DatabaseHealth {
  ok: boolean;
  /** why it is not ok: "connection refused (127.0.0.1:5432)" */
  reason?: string;
  /** when it last changed (ms since the epoch) */
  since: number;
}

/** An open database of one deployment: its pool, its schema (migrated), and writes that survive the server going away. */
export interface PostgresDatabase {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** the url with its password masked, for logs */
  readonly shownUrl: string;
  /** the schema's version once opened (after the migrations, unless read-only) */
  readonly schemaVersion: number;
  /** the schema's partition count (`cluster_settings`, migration 0008): a session's part is `partOf(key, partitions)` */
  readonly partitions: number;
  health(): DatabaseHealth;
  /**
   * Runs `fn` in one transaction and commits it. While the database cannot be reached (down,
   * restarting, network cut) it waits and tries again with backoff, reporting `degraded`, until
   * the commit succeeds: its promise settles only once the writes are committed. Any other error
   * rolls back and rejects. `fn` may run again after a connection broke during COMMIT (the commit
   * may or may not have happened): write idempotently (upserts, ids known in advance).
   */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * On a fenced database (the gateway's, src/gateway/core-cluster.ts): the leases a statement run
   * with `fencedInside` checks itself (`cluster_check_fences`, migration 0010) for writes of the
   * partitions `parts` (null: rows of no session, the writer lease). Absent: unfenced.
   */
  fence?(parts: Iterable<number | null>): CarriedFence;
  /**
   * False on the fenced database of a partition owner that does not hold the global lease
   * (`cluster.owners: "many"`, src/gateway/fenced-database.ts): a write of rows of no session is
   * refused before it is sent. Absent or true: every write may be made.
   */
  readonly global?: boolean;
  /** Stops retrying (waiting transactions reject) and closes the pool; a second call waits for the first. */
  close(): Promise<void>;
}

/** The leases a statement carries to check them itself: `cluster_check_fences(leases, owner, fences)`. */
export interface CarriedFence {
  leases: string[];
  owner: string;
  /** each lease's fence, at its place in `leases` */
  fences: number[];
}

/** Options of {@link PostgresDatabase.transaction}. */
interface TransactionOptions {
  /** `fn` runs exactly one statement: it runs without BEGIN/COMMIT (one statement is atomic on its own), two round trips fewer */
  single?: boolean;
  /**
   * with `single`: that statement calls `cluster_check_fence` with `fence()` whatever else it holds,
   * so a fenced database runs it as it is (one round trip) instead of in a transaction of its own
   * that checks the fence first
   */
  fencedInside?: boolean;
  /** with `single`: that statement writes nothing, so a fenced database runs it as it is (a fence guards writes, not reads) */
  readOnly?: boolean;
  /**
   * `fn` only reads, in several statements that must see one snapshot (no commit between them):
   * BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY (a write inside it is refused), so a fenced
   * database runs it as it is; with `single` it is an error (single would skip that BEGIN)
   */
  snapshot?: boolean;
  /**
   * the partitions whose rows `fn` writes (null: rows of no session): a fenced database checks
   * their leases' fences; default [null], the writer lease
   */
  parts?: Iterable<number | null>;
}

/** Options of {@link openPostgresDatabase}. */
export interface OpenPostgresOptions extends PostgresTarget {
  logger: Logger;
  /** a reader (the CLI): no migrations; a schema newer than the code is still refused */
  readOnly?: boolean;
  /** retry delays: the first, doubled up to the most; default 100 ms .. 5 s */
  retry?: { firstMs: number; mostMs: number };
  /** how often an idle gateway checks that the database answers, so `/healthz` knows; default 5,000 ms; 0: never */
  probeEveryMs?: number;
}

/** Runs `fn` in a transaction on a connection of its own; a broken connection is dropped, not reused. */
async function transactionOnce<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  const client = await pool.connect();
  try {
    if (!options.single)
      await client.query(options.snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN");
    const result = await fn(client);
    if (!options.single) await client.query("COMMIT");
    client.release();
    return result;
  } catch (err) {
    if (!options.single) await client.query("ROLLBACK").catch(() => {});
    client.release(isConnectionError(err) ? (err as Error) : undefined);
    throw err;
  }
}

/** Health that logs once per change, not once per failed write. */
function healthTracker(logger: Logger, shownUrl: string) {
  let current: DatabaseHealth = { ok: true, since: Date.now() };
  return {
    get: () => current,
    down(err: unknown) {
      const reason = connectionReason(err);
      if (!current.ok) return;
      current = { ok: false, reason, since: Date.now() };
      logger.warn(
        { url: shownUrl, reason },
        "PostgreSQL is unreachable: writes wait and retry; nothing unstored is acknowledged",
      );
    },
    up() {
      if (current.ok) return;
      logger.info({ url: shownUrl, downForMs: Date.now() - current.since }, "PostgreSQL is reachable again");
      current = { ok: true, since: Date.now() };
    },
  };
}

/** The schema's version, migrated unless read-only; a read-only open refuses a schema newer than the code. */
async function schemaVersionOf(pool: pg.Pool, options: OpenPostgresOptions): Promise<number> {
  if (!options.readOnly) return (await migrate(pool, { schema: options.schema, logger: options.logger })).to;
  const version = await readSchemaVersion(pool, options.schema);
  const known = loadMigrations().length;
  if (version > known)
    throw new SwitchboardError(
      "DATABASE_UNAVAILABLE",
      `the PostgreSQL schema "${options.schema}" is at version ${version}, but this switchboard knows versions up to ${known}: upgrade switchboard`,
    );
  return version;
}

/** Checks the connection and the schema; throws the one-line start failure. */
async function prepare(pool: pg.Pool, options: OpenPostgresOptions): Promise<{ version: number; partitions: number }> {
  try {
    const version = await schemaVersionOf(pool, options);
    return { version, partitions: await readPartitions(pool, version) };
  } catch (err) {
    await pool.end().catch(() => {});
    if (isSwitchboardError(err, "DATABASE_UNAVAILABLE")) throw err;
    throw new SwitchboardError("DATABASE_UNAVAILABLE", startFailureLine(options.url, err), { cause: err });
  }
}

/** Transactions that wait out a database that is away; `stop` ends the waiting (they reject). */
function retryingTransactions(
  pool: pg.Pool,
  health: ReturnType<typeof healthTracker>,
  retry: { firstMs: number; mostMs: number },
) {
  let stopped = false;
  const sleepers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  return {
    async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
      // Single skips BEGIN, so READ ONLY, and a fenced database would let a write through unfenced.
      if (options.snapshot && options.single)
        throw new Error("a snapshot transaction runs several statements: snapshot and single exclude each other");
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await transactionOnce(pool, fn, options);
          health.up();
          return result;
        } catch (err) {
          if (stopped || !isConnectionError(err)) throw err;
          health.down(err);
          await pause(Math.min(retry.mostMs, retry.firstMs * 2 ** Math.min(attempt, 16)));
        }
      }
    },
    stop() {
      stopped = true;
      for (const wake of [...sleepers]) wake();
    },
  };
}

/** A timer asking the database `SELECT 1` every `everyMs`, so an idle gateway's health is current. */
function startProbe(pool: pg.Pool, health: ReturnType<typeof healthTracker>, everyMs: number) {
  if (everyMs <= 0) return undefined;
  const probe = () => pool.query("SELECT 1").then(health.up, (err) => isConnectionError(err) && health.down(err));
  return setInterval(probe, everyMs).unref();
}

/**
 * Opens a deployment's database: connects, applies the migrations (unless read-only) and returns
 * the pool with retrying transactions. A wrong url, a refused password, a missing database or a
 * schema newer than the code reject with a `DATABASE_UNAVAILABLE` error whose message is one line
 * naming the url (password masked) and the fix.
 */
export async function openPostgresDatabase(options: OpenPostgresOptions): Promise<PostgresDatabase> {
  const pool = openPostgresPool(options);
  const shownUrl = maskDatabaseUrl(options.url);
  const { version: schemaVersion, partitions } = await prepare(pool, options);
  const health = healthTracker(options.logger, shownUrl);
  const transactions = retryingTransactions(pool, health, options.retry ?? { firstMs: 100, mostMs: 5_000 });
  const probe = startProbe(pool, health, options.probeEveryMs ?? 5_000);
  let closing: Promise<void> | undefined;
  return {
    pool,
    schema: options.schema,
    shownUrl,
    schemaVersion,
    partitions,
    health: health.get,
    transaction: transactions.transaction,
    // Once: a second close (a gateway's stop after its state's own) waits for the first instead of failing.
    close() {
      closing ??= (async () => {
        transactions.stop();
        if (probe) clearInterval(probe);
        await pool.end();
      })();
      return closing;
    },
  };
}
