// Reads a record file (`sessions.json`, `state/outbox.json`, ...) the way another process does:
// the snapshot plus the journal past it, without writing anything.
import path from "node:path";
import { createMemoryLogger } from "../../src/logger.js";
import { openRecordFile } from "../../src/state/record-file/open-record-file.js";
import { openSharedJournal } from "../../src/state/record-file/shared-journal.js";

/** Every row on disk now (snapshot + journal), as one object. */
export async function readStateFile(
  file: string,
  journalDir = path.dirname(file),
): Promise<Record<string, Record<string, unknown>>> {
  const journal = await openSharedJournal({ dir: journalDir, logger: createMemoryLogger(), readOnly: true });
  const table = await openRecordFile<Record<string, unknown>>({
    path: file,
    what: "state file",
    logger: createMemoryLogger(),
    readOnly: true,
    invalidRows: "keep",
    check: (_key, row) => ({ value: row as Record<string, unknown> }),
    shared: { journal, table: path.relative(journalDir, path.resolve(file)) },
  });
  return Object.fromEntries(table.entries());
}
