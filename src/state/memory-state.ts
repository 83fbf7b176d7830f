import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type Logger, createMemoryLogger } from "../logger.js";
import type { StatePort, StateTable, TableSpec } from "./state-port.js";
import { NotHeldError } from "./global-only-write-error.js";
import { type PartedRows, heldSet, partedImage, rowPartOf } from "./parted-image.js";

/**
 * What an in-memory port keeps, as storage would: each table's rows as plain JSON data, by the
 * table's `path`. Ports opened on the same data see each other's writes, as a reopened local port
 * sees its files.
 */
export type MemoryStateData = Map<string, Map<string, unknown>>;

/** Options of {@link openMemoryState}. */
export interface MemoryStateOptions {
  /** the stored tables, shared with ports opened before or after this one; default: a fresh, empty store */
  data?: MemoryStateData;
  /** a reader: nothing is migrated or written */
  readOnly?: boolean;
  /** where warnings about invalid rows go; default: a memory logger */
  logger?: Logger;
  /**
   * Tests of `cluster.owners: "many"`: the port holds these partitions of the sessions' (`of` gives a
   * session's), loads only their rows (and those of no session), refuses writes of others and has
   * `parted` (adopt, evict), as the PostgreSQL port opened with `parts` does.
   */
  parts?: { of: (sessionKey: string) => number; held: readonly number[] };
}

/** A stored row as storage keeps it: JSON data, never the caller's object. */
const stored = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * The rows of `spec` read from `rows`, checked as a fresh open checks them (migrated first); `rows`
 * is changed as storage would be (migrated, invalid rows dropped). The PostgreSQL port loads the same way.
 */
export async function loadRows<T extends object>(
  spec: TableSpec<T>,
  rows: Map<string, unknown>,
  options: Pick<MemoryStateOptions, "readOnly" | "logger">,
) {
  const logger = options.logger ?? createMemoryLogger();
  if (spec.migrate && !options.readOnly) {
    const migrated = await spec.migrate(Object.fromEntries(rows));
    if (migrated) {
      rows.clear();
      for (const [key, row] of Object.entries(migrated)) rows.set(key, stored(row));
    }
  }
  const valid = new Map<string, T>();
  const invalid = new Map<string, unknown>();
  for (const [key, row] of rows) {
    const checked = spec.check(key, row);
    if ("value" in checked) valid.set(key, Object.freeze(checked.value));
    else if (spec.invalidRows === "keep") invalid.set(key, row);
    else if (!options.readOnly) rows.delete(key);
    if (!("value" in checked))
      logger.warn(
        { table: spec.path, [spec.keyField ?? "key"]: key, problem: checked.error },
        `invalid ${spec.what} row`,
      );
  }
  return { valid, invalid };
}

/** How a table built by {@link imageTable} stores a change, flushes and closes. */
export interface TableStorage<T> {
  /** throws on a read-only port (before the image changes) */
  writable: () => void;
  /** stores the row under `key` (undefined: removes it, `removed` the value it had); settles when durable; may throw (before the image changes) to refuse it */
  write: (key: string, value: T | undefined, removed?: T) => Promise<void>;
  flush: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A table whose checked image (`valid`, `invalid`) answers every read, and whose writes change the
 * image at once and go to `storage`: the memory and PostgreSQL ports share it.
 */
export function imageTable<T extends object>(
  loaded: { valid: Map<string, T>; invalid: Map<string, unknown> },
  storage: TableStorage<T>,
): StateTable<T> {
  const { valid, invalid } = loaded;
  return {
    report: {},
    get: (key) => valid.get(key),
    has: (key) => valid.has(key) || invalid.has(key),
    isInvalid: (key) => invalid.has(key),
    keys: () => valid.keys(),
    values: () => valid.values(),
    entries: () => valid.entries(),
    get size() {
      return valid.size + invalid.size;
    },
    set(key, value) {
      storage.writable();
      const written = storage.write(key, value);
      valid.set(key, Object.freeze(value));
      invalid.delete(key);
      return written;
    },
    delete(key) {
      storage.writable();
      const removed = valid.get(key);
      // Handed to storage first: a removal it refuses (it throws) leaves the image as it was.
      const written = storage.write(key, undefined, removed);
      valid.delete(key);
      invalid.delete(key);
      return written;
    },
    flush: storage.flush,
    snapshot: storage.flush,
    close: storage.close,
  };
}

/** A table over `rows` (the stored data) with its checked image: every write is durable at once. */
function memoryTable<T extends object>(
  loaded: { valid: Map<string, T>; invalid: Map<string, unknown> },
  rows: Map<string, unknown>,
  writable: (key: string, value: T | undefined, removed?: T) => void,
  onClose: () => void,
): StateTable<T> {
  return imageTable(loaded, {
    // A write throws at once on a read-only port, as the local one does; otherwise it is durable already.
    writable: () => writable("", undefined),
    write(key, value, removed) {
      writable(key, value, removed);
      if (value === undefined) rows.delete(key);
      else rows.set(key, stored(value));
      return Promise.resolve();
    },
    flush: async () => {},
    async close() {
      onClose();
    },
  });
}

/**
 * The state port in memory, for unit tests and tools that need no files: every write is durable
 * the moment it is made (there is nothing to crash), so `commit`, `flush` and a write's promise
 * settle at once. Reopening on the same `data` loads and checks the rows again, as a restart does.
 * It passes the state contract suite (test/contracts/state-contract.ts) except the crash tests.
 */
export function openMemoryState(options: MemoryStateOptions = {}): StatePort {
  const data = options.data ?? new Map();
  const readOnly = options.readOnly === true;
  const open = new Map<string, StateTable<object>>();
  const parted = options.parts && memoryParted(data, options, options.parts);
  const writable = (spec: TableSpec<object>) => (key: string, value: object | undefined, removed?: object) => {
    if (readOnly) throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `${spec.path} was opened read-only`);
    if (key !== "") parted?.check(spec, key, value, removed);
  };
  return {
    readOnly,
    ...(parted && { parted: parted.image.port }),
    async table<T extends object>(spec: TableSpec<T>): Promise<StateTable<T>> {
      if (open.has(spec.name))
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `state table "${spec.name}" is already open`);
      const rows = data.get(spec.path) ?? new Map<string, unknown>();
      if (!readOnly) data.set(spec.path, rows);
      const anySpec = spec as unknown as TableSpec<object>;
      // A parted port loads a copy of the held rows (a load's migrate or drop then rewrites nothing
      // of the others), while no adopt or evict runs.
      const loaded = (
        parted ? await parted.image.open(anySpec, () => parted.load(anySpec)) : await loadRows(spec, rows, options)
      ) as Awaited<ReturnType<typeof loadRows<T>>>;
      const table = memoryTable(loaded, rows, writable(anySpec), () => {
        open.delete(spec.name);
        parted?.image.closed(spec.name);
      });
      open.set(spec.name, table as StateTable<object>);
      return table;
    },
    async commit(fn) {
      fn();
    },
    flush: async () => {},
    async close() {
      for (const table of [...open.values()]) await table.close();
    },
  };
}

/**
 * The memory port's partitions (tests of `cluster.owners: "many"`): a table loads the rows of the
 * held ones (and those of no session); adopt and evict move rows into and out of open images
 * (./parted-image.ts, as the PostgreSQL port does).
 */
function memoryParted(
  data: MemoryStateData,
  options: MemoryStateOptions,
  parts: NonNullable<MemoryStateOptions["parts"]>,
) {
  const set = heldSet(parts.held);
  const partOf = (spec: TableSpec<object>) => rowPartOf(spec, parts.of);
  // Rows whose check fails have no part to read: they load with every set, as rows of no session.
  const partOfStored = (spec: TableSpec<object>, key: string, row: unknown) => {
    const checked = spec.check(key, row);
    return "value" in checked ? partOf(spec)(key, checked.value) : null;
  };
  const rowsOf = (spec: TableSpec<object>, wanted: (part: number | null) => boolean) =>
    new Map(
      [...(data.get(spec.path) ?? new Map<string, unknown>())].filter(([key, row]) =>
        wanted(partOfStored(spec, key, row)),
      ),
    );
  const read = async (spec: TableSpec<object>, wanted: (part: number | null) => boolean, readOnly?: boolean) => {
    const rows = rowsOf(spec, wanted);
    const loaded = await loadRows(spec, rows, { ...options, ...(readOnly && { readOnly }) });
    return { loaded, partOf: (key: string) => partOf(spec)(key, loaded.valid.get(key)) } satisfies PartedRows;
  };
  const image = partedImage(set, {
    read: (spec, adopted) => read(spec, (part) => part !== null && adopted.includes(part), true),
    settle: async () => {},
  });
  return {
    image,
    load: (spec: TableSpec<object>) => read(spec, set.holds),
    /** refuses a write of a row of a partition not held now; tells the image of one let through */
    check(spec: TableSpec<object>, key: string, value: object | undefined, removed: object | undefined) {
      const part = partOf(spec)(key, value ?? removed);
      if (!set.holds(part)) throw new NotHeldError(spec.name, key, part!, set.shown);
      image.wrote(spec.name, key, value === undefined ? null : part);
    },
  };
}
