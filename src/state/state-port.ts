/**
 * The state port: the one way the core keeps durable state (session stores, the outbox, the
 * inbound dedupe, the sub-agent registry). The stores depend on this interface, never on files;
 * `openLocalState` (`./local-state.ts`) is the implementation on local files, and another
 * implementation (PostgreSQL) must pass the same contract suite (`test/contracts/state-contract.ts`).
 *
 * Why reads are synchronous and writes are not: the gateway is the only writer of its state, so
 * every implementation loads a table when it is opened and then writes through. The in-memory
 * image is always the truth for this process, reads never wait on storage, and a store's
 * read-modify-write (read the row, compute the change, `set` it) cannot lose an update, because
 * nothing can change the row between the read and the `set` of the same synchronous step. A write
 * changes the image at once and its promise settles only when the change is durable; a caller
 * acknowledges anything to the outside world (a platform, a client) only after that.
 */
import type { SnapshotStep } from "./record-file/open-record-file.js";

/** A row read from storage, checked: its value, or why it is invalid. */
type RowCheck<T> = { value: T } | { error: string };

/** What a store asks of a table. */
export interface TableSpec<T> {
  /** the table's logical name, unique in one port: "sessions:<agentId>", "outbox", "inbox", "subagents" */
  name: string;
  /** where the local implementation keeps the table (its JSON snapshot; the journal lives next to it) */
  path: string;
  /** what the table is, for log lines ("session store") */
  what: string;
  /** the log field naming a row's key ("sessionKey", "id"); default "key" */
  keyField?: string;
  /**
   * For a table whose rows belong to sessions: the canonical key of the session a row belongs to
   * (undefined: none). PostgreSQL stores the row under that session's partition (`part`,
   * docs/scale-out.md); the local files ignore it. Absent: the table belongs to no session.
   */
  sessionOf?: (key: string, row: T) => string | undefined;
  /** checks a row read from storage */
  check: (key: string, row: unknown) => RowCheck<T>;
  /** rows that fail their check are kept untouched and skipped ("keep"), or dropped with a warning ("drop") */
  invalidRows: "keep" | "drop";
  /**
   * Rewrites stored data the table did not write itself (hand-edited, older versions) before its
   * rows are checked; returns the new data, or undefined when nothing changed.
   */
  migrate?: (data: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;
  /** local implementation: a snapshot is written once the journal has grown by this many bytes */
  snapshotAfterBytes?: number;
  /** local implementation: ...or once changes are this old */
  snapshotAfterMs?: number;
  /** local implementation: called at each step of writing a snapshot (crash tests); others never call it */
  onSnapshotStep?: (step: SnapshotStep) => Promise<void> | void;
  /**
   * A port opened for some partitions (PostgreSQL, `cluster.owners: "many"`) that adopts more
   * ({@link PartedState.adopt}): their rows of this table (valid ones; `sessionOf` tables only) have
   * just joined the image. The store indexes them (docs/scale-out.md "Partitions adopted and evicted
   * one by one"). Called once per adopt, synchronously, before `adopt` settles.
   */
  onAdopt?: (rows: ReadonlyArray<readonly [string, T]>) => void;
  /** The rows of partitions the port evicts ({@link PartedState.evict}) have just left the image: the store forgets them. */
  onEvict?: (rows: ReadonlyArray<readonly [string, T]>) => void;
}

/** What opening a table found. */
interface TableReport {
  /** where stored data that could not be read at all was moved; the table then started empty */
  corruptMovedTo?: string;
}

/**
 * One table of rows by key, loaded when opened. Reads are synchronous from the in-memory image;
 * `set` and `delete` change the image at once and settle when the change is durable.
 */
export interface StateTable<T> {
  readonly report: TableReport;
  /** The valid row under `key`. */
  get(key: string): T | undefined;
  /** True when `key` holds a row, valid or not. */
  has(key: string): boolean;
  /** True when `key` holds a row that failed its check (kept untouched). */
  isInvalid(key: string): boolean;
  /** Keys of the valid rows, in insertion order. */
  keys(): IterableIterator<string>;
  /** The valid rows. */
  values(): IterableIterator<T>;
  /** Keys and valid rows. */
  entries(): IterableIterator<[string, T]>;
  /** Number of rows, valid or not. */
  readonly size: number;
  /** Replaces the row under `key` (the value is frozen); settles once the change is durable. */
  set(key: string, value: T): Promise<void>;
  /** Removes the row under `key`, valid or not; settles once the change is durable. */
  delete(key: string): Promise<void>;
  /** Settles when every change made so far is durable. */
  flush(): Promise<void>;
  /** Writes the readable form of the table now (the local implementation's JSON snapshot). */
  snapshot(): Promise<void>;
  /** Flushes and leaves the stored table complete and readable on its own; later writes still work. */
  close(): Promise<void>;
}

/**
 * A port opened for a set of partitions whose set changes while it runs (docs/scale-out.md
 * "Partitions adopted and evicted one by one"): only the PostgreSQL port with `parts` has it.
 */
export interface PartedState {
  /** the partitions held now */
  held(): ReadonlySet<number>;
  /**
   * Loads every open per-session table's rows of `parts` into its image (checked as a load checks
   * them; nothing is rewritten), calls each table's `onAdopt`, and from then on writes of those
   * partitions are this port's. A table opened later loads them too.
   */
  adopt(parts: readonly number[]): Promise<void>;
  /**
   * Refuses writes of `parts` from now on, waits for the writes already made to be stored, then
   * takes those partitions' rows out of every open table's image and calls each table's `onEvict`.
   */
  evict(parts: readonly number[]): Promise<void>;
}

/** The gateway's durable state: tables, and commits spanning them. */
export interface StatePort {
  /** a port whose partitions change while it runs (PostgreSQL opened with `parts`); undefined: it holds every row */
  readonly parted?: PartedState;
  /** true for a reader in another process (the CLI): nothing is moved, migrated or written */
  readonly readOnly: boolean;
  /** Opens (loads) a table; a name can be open once per port at a time. */
  table<T extends object>(spec: TableSpec<T>): Promise<StateTable<T>>;
  /**
   * Runs `fn`; the writes it makes synchronously, on any tables of this port, become durable
   * together: after a crash all of them are there or none. The promise settles when they are (it
   * rejects if they failed). If `fn` throws, the writes it made before the throw (already in the
   * tables' images, which cannot be rolled back) are still committed together, and the promise
   * rejects with `fn`'s error: memory and storage never disagree.
   */
  commit(fn: () => void): Promise<void>;
  /** Settles when every change made so far, on every open table, is durable. */
  flush(): Promise<void>;
  /** Closes every table still open; close the stores first. */
  close(): Promise<void>;
}
