import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { type RecordFile, openRecordFile } from "./record-file/open-record-file.js";
import { type SharedJournal, openSharedJournal } from "./record-file/shared-journal.js";
import type { StatePort, StateTable, TableSpec } from "./state-port.js";

/** Options of {@link openLocalState}. */
export interface LocalStateOptions {
  /** the folder of the shared journal (the gateway's `state/`); tables may live anywhere */
  dir: string;
  logger: Logger;
  now?: () => number;
  /** a reader in another process: no moving aside, no truncating, no writes */
  readOnly?: boolean;
  /** told how long each journal batch's write and sync took, in seconds (metrics); default none */
  onSync?: (seconds: number) => void;
}

/** A record file seen through the port's table interface; `onClose` runs before the file closes. */
function tableOf<T extends object>(file: RecordFile<T>, onClose: () => void): StateTable<T> {
  return {
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
    set: (key, value) => file.set(key, value),
    delete: (key) => file.delete(key),
    flush: () => file.flush(),
    snapshot: () => file.snapshot(),
    async close() {
      onClose();
      await file.close();
    },
  };
}

/** Opens one table as a record file whose changes go to the shared journal; a name already open is refused. */
async function openTable<T extends object>(
  options: LocalStateOptions,
  open: Map<string, StateTable<object>>,
  sharedJournal: () => Promise<SharedJournal>,
  spec: TableSpec<T>,
): Promise<StateTable<T>> {
  if (open.has(spec.name))
    throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `state table "${spec.name}" is already open`);
  const { name, ...rest } = spec;
  const readOnly = options.readOnly === true;
  const file = await openRecordFile<T>({
    ...rest,
    logger: options.logger,
    ...(options.now && { now: options.now }),
    ...(readOnly && { readOnly }),
    // In the journal a table is its snapshot's path from the journal's folder, which holds wherever the home moves.
    shared: { journal: await sharedJournal(), table: path.relative(options.dir, path.resolve(spec.path)) },
  });
  const table = tableOf(file, () => open.delete(name));
  open.set(name, table);
  return table;
}

/**
 * The state port on local files: each table is a record file at its `path` (a readable JSON
 * snapshot), and every table's changes go to one shared journal in `dir`
 * (`<dir>/state.journal.<n>`, see docs/performance.md), so the writes of a turn share one
 * `fdatasync` and `commit` writes its changes as one line: all of them survive a crash, or none.
 */
export function openLocalState(options: LocalStateOptions): StatePort {
  const open = new Map<string, StateTable<object>>();
  const readOnly = options.readOnly === true;
  let journal: Promise<SharedJournal> | undefined;
  /** the journal once open, so a commit runs its function at once (in the caller's synchronous step) */
  let opened: SharedJournal | undefined;
  const sharedJournal = () => {
    journal ??= openSharedJournal({
      dir: options.dir,
      logger: options.logger,
      ...(options.now && { now: options.now }),
      ...(readOnly && { readOnly }),
      onSync: options.onSync,
    }).then((shared) => (opened = shared));
    return journal;
  };
  return {
    readOnly,
    table: <T extends object>(spec: TableSpec<T>) => openTable(options, open, sharedJournal, spec),
    async commit(fn) {
      await (opened ?? (await sharedJournal())).commit(fn);
    },
    async flush() {
      if (journal) await (await journal).idle();
    },
    async close() {
      await Promise.all([...open.values()].map((table) => table.close()));
      if (journal) await (await journal).close();
    },
  };
}
