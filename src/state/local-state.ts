import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { openRecordFile } from "./record-file/open-record-file.js";
import type { StatePort, StateTable, TableSpec } from "./state-port.js";

/** Options of {@link openLocalState}. */
export interface LocalStateOptions {
  logger: Logger;
  now?: () => number;
  /** a reader in another process: no moving aside, no truncating, no writes */
  readOnly?: boolean;
}

/**
 * The state port on local files: each table is a record file at its `path` (a JSON snapshot with
 * its own journal, see docs/performance.md). `commit` waits for every write its function made;
 * those writes are not yet atomic across tables (each file has its own journal).
 */
export function openLocalState(options: LocalStateOptions): StatePort {
  const open = new Map<string, StateTable<object>>();
  const commits: Promise<void>[][] = [];
  const readOnly = options.readOnly === true;
  const tracked = (write: Promise<void>) => {
    for (const writes of commits) writes.push(write);
    return write;
  };
  return {
    readOnly,
    async table<T extends object>(spec: TableSpec<T>): Promise<StateTable<T>> {
      if (open.has(spec.name))
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `state table "${spec.name}" is already open`);
      const { name, ...rest } = spec;
      const file = await openRecordFile<T>({
        ...rest,
        logger: options.logger,
        ...(options.now && { now: options.now }),
        ...(readOnly && { readOnly }),
      });
      const table: StateTable<T> = {
        report: file.report,
        get: (key) => file.get(key),
        has: (key) => file.has(key),
        isInvalid: (key) => file.isInvalid(key),
        keys: () => file.keys(),
        values: () => file.values(),
        entries: () => file.entries(),
        get size() {
          return file.size;
        },
        set: (key, value) => tracked(file.set(key, value)),
        delete: (key) => tracked(file.delete(key)),
        flush: () => file.flush(),
        snapshot: () => file.snapshot(),
        async close() {
          open.delete(name);
          await file.close();
        },
      };
      open.set(name, table);
      return table;
    },
    async commit(fn) {
      const writes: Promise<void>[] = [];
      commits.push(writes);
      try {
        fn();
      } finally {
        commits.splice(commits.indexOf(writes), 1);
      }
      await Promise.all(writes);
    },
    async flush() {
      await Promise.all([...open.values()].map((table) => table.flush()));
    },
    async close() {
      await Promise.all([...open.values()].map((table) => table.close()));
    },
  };
}
