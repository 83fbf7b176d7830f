import type pg from "pg";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { imageTable, loadRows } from "../memory-state.js";
import { NotHeldError } from "../global-only-write-error.js";
import { type PartedRows, partedImage } from "../parted-image.js";
import type { StatePort, StateTable, TableSpec } from "../state-port.js";
import type { PostgresDatabase } from "./database.js";
import { GlobalOnlyWriteError } from "../global-only-write-error.js";
import { type HeldParts, heldParts } from "./held-parts.js";
import { backfillRowParts, partOfSession } from "./partitions.js";
import { type RowWriter, jsonbText, rowWriterOf } from "./row-writer.js";

/** Options of {@link openPostgresState}. */
export interface PostgresStateOptions {
  logger: Logger;
  /** a reader in another process (the CLI): nothing is migrated or written */
  readOnly?: boolean;
  /**
   * The partitions to open (default all, as one owner holds them): only their rows load, with the
   * rows of no session (part NULL), and a write of a row of another partition is refused.
   */
  parts?: readonly number[];
}

/**
 * The rows of `tbl` a port holding `held` loads (and rewrites): its partitions' and those of no
 * session (`noSession` false: its partitions' alone, as a partition owner without the global lease rewrites).
 */
function heldRows(held: HeldParts, first: number, noSession = true) {
  if (held.all) return { where: noSession ? "tbl = $1" : "tbl = $1 AND part IS NOT NULL", params: [] };
  const none = noSession ? "part IS NULL OR " : "";
  return { where: `tbl = $1 AND (${none}part = ANY($${first}::smallint[]))`, params: [held.list] };
}

/**
 * The stored rows of table `tbl` that `rowsOf` selects (`heldRows`: the partitions held), in
 * insertion order, with the part each is stored under and the keys of those stored without one.
 */
async function readRows(database: PostgresDatabase, tbl: string, rowsOf: { where: string; params: unknown[] }) {
  // One statement that only reads: no transaction, and no fence check on a fenced database (one round trip).
  const result = await database.transaction(
    (client) =>
      client.query<{ key: string; value: unknown; part: number | null }>(
        `SELECT key, value, part FROM state_rows WHERE ${rowsOf.where} ORDER BY ord`,
        [tbl, ...rowsOf.params],
      ),
    { single: true, readOnly: true },
  );
  const unset = result.rows.filter((row) => row.part === null).map((row) => row.key);
  const parts = new Map(result.rows.map((row) => [row.key, row.part]));
  return { rows: new Map(result.rows.map((row) => [row.key, row.value])), unset, parts };
}

/**
 * The rows of partitions `parts` of table `spec` a port adopts: those stored under them (not the
 * rows stored without a part, loaded with every set), checked as a load checks them; nothing is
 * migrated, rewritten or given a part.
 */
async function readAdopted(
  database: PostgresDatabase,
  spec: TableSpec<object>,
  options: PostgresStateOptions & { parts: number[] },
): Promise<PartedRows> {
  const where = { where: "tbl = $1 AND part = ANY($2::smallint[])", params: [options.parts] };
  const { rows, parts } = await readRows(database, spec.name, where);
  const loaded = await loadRows(spec, rows, { ...options, readOnly: true });
  return { loaded, partOf: (key) => parts.get(key) ?? null };
}

/** How a table's rows get their part: from the session `spec.sessionOf` names (null when none). */
function partsOf<T extends object>(database: PostgresDatabase, spec: TableSpec<T>) {
  const { sessionOf } = spec;
  return (key: string, value: T | undefined): number | null =>
    sessionOf && value !== undefined ? partOfSession(database, sessionOf(key, value)) : null;
}

/**
 * Stores `rows` as all of table `tbl` that `held` loaded (after a table's `migrate` rewrote it, or
 * invalid rows were dropped); `noSession` false: only the rows of its partitions that had their part already.
 */
async function rewriteRows(
  client: pg.PoolClient,
  { tbl, held, noSession }: { tbl: string; held: HeldParts; noSession: boolean },
  rows: Map<string, unknown>,
  partOfKey: (key: string) => number | null,
): Promise<void> {
  const rowsOf = heldRows(held, 2, noSession);
  await client.query(`DELETE FROM state_rows WHERE ${rowsOf.where}`, [tbl, ...rowsOf.params]);
  await client.query(
    `INSERT INTO state_rows (tbl, key, value, part)
     SELECT $1, key, value, part FROM unnest($2::text[], $3::jsonb[], $4::smallint[]) WITH ORDINALITY AS w(key, value, part, n)
     ORDER BY n`,
    [tbl, [...rows.keys()], [...rows.values()].map(jsonbText), [...rows.keys()].map(partOfKey)],
  );
}

/**
 * Stores what loading table `tbl` changed (`rows`, checked). The global holder (or one owner)
 * rewrites every row it loaded, fenced by the writer lease. A partition owner without it rewrites
 * only its partitions' rows that had their part (those of no session are the global holder's),
 * fenced by its partitions' leases.
 */
function storeChecked(
  database: PostgresDatabase,
  { tbl, held, unset }: { tbl: string; held: HeldParts; unset: string[] },
  rows: Map<string, unknown>,
  partOfKey: (key: string) => number | null,
): Promise<void> {
  if (database.global !== false)
    return database.transaction((c) => rewriteRows(c, { tbl, held, noSession: true }, rows, partOfKey));
  const parts = held.all ? Array.from({ length: database.partitions }, (_, n) => n) : held.list;
  if (parts.length === 0) return Promise.resolve();
  const skipped = new Set(unset);
  const own = [...rows].filter(([key]) => !skipped.has(key) && partOfKey(key) !== null && held.holds(partOfKey(key)));
  return database.transaction((c) => rewriteRows(c, { tbl, held, noSession: false }, new Map(own), partOfKey), {
    parts,
  });
}

/**
 * Loads and checks a table (the rows of the partitions `held`) as the memory port does; what the
 * check changed (migrated, dropped) is stored. A writer (the global holder: not a partition owner
 * without the global lease) then gives the rows stored without a part (before migration 0008)
 * theirs; those of a partition not held are then left out of the image.
 */
async function loadTable<T extends object>(
  database: PostgresDatabase,
  spec: TableSpec<T>,
  options: PostgresStateOptions & { held: HeldParts },
) {
  const { held } = options;
  const { rows, unset, parts } = await readRows(database, spec.name, heldRows(held, 2));
  const before = new Map(rows);
  const loaded = await loadRows(spec, rows, options);
  const changed = before.size !== rows.size || [...rows].some(([key, value]) => before.get(key) !== value);
  const part = partsOf(database, spec);
  const partOfKey = (key: string) => part(key, loaded.valid.get(key));
  if (!options.readOnly && changed) await storeChecked(database, { tbl: spec.name, held, unset }, rows, partOfKey);
  // Rows without a part are rows of no session until given theirs: the global holder's to give.
  if (!options.readOnly && !changed && spec.sessionOf && database.global !== false) {
    const known = unset.map((key): [string, number | null] => [key, partOfKey(key)]);
    await backfillRowParts(
      database,
      spec.name,
      known.filter((row): row is [string, number] => row[1] !== null),
    );
  }
  for (const key of unset.filter((key) => !held.holds(partOfKey(key)))) {
    loaded.valid.delete(key);
    loaded.invalid.delete(key);
  }
  // The part each row is stored under now: a row stored without one got it from a writer's backfill
  // above; on a partition owner without the global lease it has none yet and stays in every set.
  const backfilled = !options.readOnly && database.global !== false;
  return { loaded, partOf: (key: string) => parts.get(key) ?? (backfilled ? partOfKey(key) : null) };
}

/**
 * Refuses a write a port holding `held` may not make: a row of a partition it does not hold (now),
 * the removal of a row of a per-session table it never loaded (whose partition it cannot know), or,
 * on a partition owner without the global lease, a row of no session (the global holder's).
 */
function refuseOthers(
  name: string,
  held: HeldParts,
  row: { key: string; part: number | null; known: boolean; global: boolean },
) {
  if (!held.holds(row.part)) throw new NotHeldError(name, row.key, row.part!, held.shown);
  if (!held.all && !row.known)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `state table "${name}": row "${row.key}" is not among the rows of the partitions this port holds (${held.shown}), so its partition is unknown and it is not removed`,
    );
  if (!row.global && row.part === null)
    throw new GlobalOnlyWriteError(`state table "${name}": row "${row.key}" belongs to no session and was not written`);
}

/** What the tables of one port share. */
interface PortParts {
  database: PostgresDatabase;
  held: HeldParts;
  writer: RowWriter;
  image: ReturnType<typeof partedImage> | undefined;
  readOnly: boolean;
}

/** An open table of the port over its loaded image: writes checked against the held set, then group committed. */
function postgresTable<T extends object>(
  { database, held, writer, image, readOnly }: PortParts,
  spec: TableSpec<T>,
  loaded: { valid: Map<string, T>; invalid: Map<string, unknown> },
  onClose: () => void,
): StateTable<T> {
  const part = partsOf(database, spec);
  let closed = false;
  return imageTable(loaded, {
    writable: () => {
      if (readOnly)
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `state table "${spec.name}" was opened read-only`);
    },
    // Serialized now (before the image changes): the stored row is the value as it is at this step.
    // A removal is fenced by the partition of the row it removes.
    write: (key, value, removed) => {
      // A turn a stopped core cut off must not write behind the next core's image (a reopen, `cluster.owners: "many"`).
      if (closed) throw new SwitchboardError(ErrorCodes.UNAVAILABLE, `state table "${spec.name}" is closed`);
      const row = value ?? removed;
      const rowPart = part(key, row);
      // An invalid row this port loaded (kept aside) may be removed: it is this port's, part unknown.
      const known = row !== undefined || loaded.invalid.has(key) || !spec.sessionOf;
      refuseOthers(spec.name, held, { key, part: rowPart, known, global: database.global !== false });
      image?.wrote(spec.name, key, value === undefined ? null : rowPart);
      return writer.write(spec.name, key, value === undefined ? undefined : jsonbText(value), rowPart);
    },
    flush: writer.idle,
    close: () => {
      closed = true;
      image?.closed(spec.name);
      onClose();
      return writer.idle();
    },
  });
}

/**
 * The state port on PostgreSQL: each table is the rows of `state_rows` under its name (key, jsonb
 * value, insertion order), loaded when opened; writes change the image at once and are group
 * committed (./row-writer.ts): the writes of one `commit` are one transaction, and a write settles
 * only once committed. While the database is away writes wait and retry (./database.ts), so
 * nothing is acknowledged that is not stored. Opened with `parts`, it has `parted`: it adopts and
 * evicts partitions while it runs. Closing the port leaves the database open (its owner closes it).
 */
export function openPostgresState(database: PostgresDatabase, options: PostgresStateOptions): StatePort {
  const readOnly = options.readOnly === true;
  const held = heldParts(options.parts, database.partitions);
  const open = new Map<string, StateTable<object>>();
  const writer = rowWriterOf(database);
  const image =
    options.parts === undefined
      ? undefined
      : partedImage(held, {
          read: (spec, parts) => readAdopted(database, spec, { ...options, parts }),
          settle: writer.idle,
        });
  const shared: PortParts = { database, held, writer, image, readOnly };
  return {
    readOnly,
    ...(image && { parted: image.port }),
    async table<T extends object>(spec: TableSpec<T>): Promise<StateTable<T>> {
      if (open.has(spec.name))
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `state table "${spec.name}" is already open`);
      const load = () => loadTable(database, spec, { ...options, held });
      const anySpec = spec as unknown as TableSpec<object>;
      // A parted port loads while no adopt or evict runs, and the table's rows are moved by the later ones.
      const loaded = (image ? await image.open(anySpec, load as () => Promise<PartedRows>) : (await load()).loaded) as {
        valid: Map<string, T>;
        invalid: Map<string, unknown>;
      };
      const table = postgresTable(shared, spec, loaded, () => open.delete(spec.name));
      open.set(spec.name, table as StateTable<object>);
      return table;
    },
    async commit(fn) {
      let failure: { error: unknown } | undefined;
      try {
        fn();
      } catch (error) {
        failure = { error };
      }
      // Every write `fn` made is in the batch being filled now: one transaction.
      await writer.pending();
      if (failure) throw failure.error;
    },
    flush: () => writer.idle(),
    async close() {
      for (const table of [...open.values()]) await table.close();
      await writer.idle();
    },
  };
}
