// The image side of a port whose partitions change while it runs (docs/scale-out.md "Partitions
// adopted and evicted one by one"): which partitions are held now, and each open per-session
// table's rows moved into or out of its image. The memory port (tests) and the PostgreSQL port
// share it; each reads the rows of adopted partitions from its own storage.
import type { PartedState, TableSpec } from "./state-port.js";

/** Checked rows: the image maps `imageTable` reads, or rows read for an adopt. */
interface CheckedRows {
  valid: Map<string, object>;
  invalid: Map<string, unknown>;
}

/** Checked rows with the partition each is stored under (null: none, a row of every set). */
export interface PartedRows {
  loaded: CheckedRows;
  partOf: (key: string) => number | null;
}

/** One open per-session table as the parted image sees it. */
interface PartedTable {
  spec: TableSpec<object>;
  loaded: CheckedRows;
  /** the keys of the image's rows by partition: an evict takes out O(rows moved) */
  index: ReturnType<typeof partIndex>;
  /** while an adopt runs: the keys written since it began (the image holds a row as new as the one read, or newer) */
  written?: Set<string>;
}

/** The partition of a row of `spec` (null: a row of no session, held by every set). */
export function rowPartOf(spec: TableSpec<object>, partOf: (sessionKey: string) => number) {
  return (key: string, row: object | undefined): number | null => {
    const session = spec.sessionOf && row !== undefined ? spec.sessionOf(key, row) : undefined;
    return session === undefined ? null : partOf(session);
  };
}

/** Consecutive numbers as ranges: [0, 1, 2, 5] -> "0-2, 5"; none: "none". */
function ranges(sorted: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(", ") || "none";
}

/** The held set, changed by adopt and evict; `holds(null)` (a row of no session) is always true. */
export function heldSet(initial: readonly number[]) {
  const held = new Set(initial);
  return {
    held: (): ReadonlySet<number> => held,
    holds: (part: number | null) => part === null || held.has(part),
    /** Holds `parts` from now on; returns those not held before. */
    add(parts: readonly number[]): number[] {
      const fresh = [...new Set(parts)].filter((part) => !held.has(part));
      for (const part of fresh) held.add(part);
      return fresh;
    },
    remove(parts: readonly number[]): void {
      for (const part of parts) held.delete(part);
    },
    /** the set for an error message: "3, 9-11" */
    get shown(): string {
      return ranges([...held].sort((a, b) => a - b));
    },
  };
}

/** A held set as {@link partedImage} changes it (the PostgreSQL port's checks the numbers). */
type HeldSet = Pick<ReturnType<typeof heldSet>, "held" | "add" | "remove">;

/** The keys of an image by partition, kept on every load, adopt and write. */
function partIndex() {
  const partOfKey = new Map<string, number>();
  const keysOf = new Map<number, Set<string>>();
  return {
    /** `key`'s row is stored under `part` now (null: removed, or stored under none) */
    note(key: string, part: number | null): void {
      const before = partOfKey.get(key);
      if (before !== undefined) keysOf.get(before)?.delete(key);
      partOfKey.delete(key);
      if (part === null) return;
      partOfKey.set(key, part);
      const keys = keysOf.get(part) ?? new Set<string>();
      keysOf.set(part, keys.add(key));
    },
    /** The keys under `parts`, forgotten. */
    take(parts: readonly number[]): string[] {
      const keys = parts.flatMap((part) => [...(keysOf.get(part) ?? [])]);
      for (const part of parts) keysOf.delete(part);
      for (const key of keys) partOfKey.delete(key);
      return keys;
    },
  };
}

/** Adds rows read for an adopt to a table's image (not those written meanwhile) and tells its store (`onAdopt`). */
function addToImage(table: PartedTable, { loaded, partOf }: PartedRows): void {
  const fresh = (key: string) => !table.written?.has(key);
  const valid = [...loaded.valid].filter(([key]) => fresh(key));
  for (const [key, row] of valid) table.loaded.valid.set(key, row);
  for (const [key, row] of loaded.invalid) if (fresh(key)) table.loaded.invalid.set(key, row);
  for (const key of [...loaded.valid.keys(), ...loaded.invalid.keys()])
    if (fresh(key)) table.index.note(key, partOf(key));
  if (valid.length > 0) table.spec.onAdopt?.(valid);
}

/** Takes the rows of `parts` (valid and invalid) out of a table's image and tells its store (`onEvict`). */
function removeFromImage(table: PartedTable, parts: readonly number[]): void {
  const left: Array<[string, object]> = [];
  for (const key of table.index.take(parts)) {
    const row = table.loaded.valid.get(key);
    if (row !== undefined) left.push([key, row]);
    table.loaded.valid.delete(key);
    table.loaded.invalid.delete(key);
    // Out of the image: an adopt of its partition called meanwhile takes the stored row.
    table.written?.delete(key);
  }
  if (left.length > 0) table.spec.onEvict?.(left);
}

/**
 * Table opens run together; an adopt or evict (a move) runs alone, in call order: it waits for
 * the opens under way, and an open waits for the moves called before it. So a table loads by one
 * held set and is moved by every later change of it, once.
 */
function movesAndOpens() {
  let moving: Promise<unknown> = Promise.resolve();
  const opening = new Set<Promise<unknown>>();
  return {
    async open<T>(load: () => Promise<T>): Promise<T> {
      for (let last = moving; ; last = moving) {
        await last;
        if (last === moving) break;
      }
      const loading = load();
      opening.add(loading);
      try {
        return await loading;
      } finally {
        opening.delete(loading);
      }
    },
    move(fn: () => Promise<void>): Promise<void> {
      const run = moving.then(() => Promise.allSettled([...opening])).then(fn);
      moving = run.catch(() => {});
      return run;
    },
  };
}

/** How a port reads the rows of partitions it adopts and waits for its writes. */
export interface PartedStorage {
  /** the stored rows of `parts` of `spec`'s table, checked as a load checks them (nothing migrated or rewritten) */
  read(spec: TableSpec<object>, parts: number[]): Promise<PartedRows>;
  /** settles when every write made so far is stored */
  settle(): Promise<void>;
}

/**
 * The partitions of a port and the images of its open per-session tables. `adopt`: the set grows at
 * once (a write of those partitions racing the adopt is taken), then, in turn, the writes made so
 * far are stored and the rows are read and join the images (not over a row written since the adopt
 * began); a read that fails gives the partitions up again. `evict`: the set shrinks at once (writes
 * refused), then, in turn, the writes made before are stored and the rows leave the images. Both
 * move O(rows moved).
 */
export function partedImage(set: HeldSet, storage: PartedStorage) {
  const tables = new Map<string, PartedTable>();
  const lock = movesAndOpens();
  let adopting = 0;
  const read = async (moved: PartedTable[], fresh: number[]) => {
    await storage.settle();
    const rows = await Promise.all(moved.map((table) => storage.read(table.spec, fresh)));
    for (const [i, table] of moved.entries()) addToImage(table, rows[i]!);
  };
  const adopt = async (fresh: number[]) => {
    adopting++;
    try {
      await lock.move(() => read([...tables.values()], fresh));
    } catch (error) {
      // Not read: those partitions are not held after all (a write would go against an image
      // without their rows); the rows written since the call leave the images as an evict's do.
      set.remove(fresh);
      for (const table of tables.values()) removeFromImage(table, fresh);
      throw error;
    } finally {
      if (--adopting === 0) for (const table of tables.values()) table.written = undefined;
    }
  };
  const port: PartedState = {
    held: set.held,
    async adopt(parts) {
      const fresh = set.add(parts);
      if (fresh.length > 0) await adopt(fresh);
    },
    async evict(parts) {
      set.remove(parts);
      await lock.move(async () => {
        await storage.settle();
        for (const table of tables.values()) removeFromImage(table, parts);
      });
    },
  };
  return {
    port,
    /** Loads a table (after the moves called before); a per-session table's rows are then moved by later ones. */
    async open(spec: TableSpec<object>, load: () => Promise<PartedRows>): Promise<CheckedRows> {
      const { loaded, partOf } = await lock.open(load);
      if (!spec.sessionOf) return loaded;
      const table: PartedTable = { spec, loaded, index: partIndex() };
      for (const key of [...loaded.valid.keys(), ...loaded.invalid.keys()]) table.index.note(key, partOf(key));
      tables.set(spec.name, table);
      return loaded;
    },
    closed: (name: string) => tables.delete(name),
    /** A write of table `name` the port let through: the row under `key` is stored under `part` now (null: removed). */
    wrote(name: string, key: string, part: number | null): void {
      const table = tables.get(name);
      if (!table) return;
      table.index.note(key, part);
      if (adopting === 0) return;
      table.written ??= new Set();
      table.written.add(key);
    },
  };
}
