// Reads a record file (`sessions.json`, `state/outbox.json`, ...) the way another process does:
// the snapshot plus the journal past it, without writing anything.
import { createMemoryLogger } from "../../src/logger.js";
import { openRecordFile } from "../../src/state/record-file/open-record-file.js";

/** Every row on disk now (snapshot + journal), as one object. */
export async function readStateFile(file: string): Promise<Record<string, Record<string, unknown>>> {
  const table = await openRecordFile<Record<string, unknown>>({
    path: file,
    what: "state file",
    logger: createMemoryLogger(),
    readOnly: true,
    invalidRows: "keep",
    check: (_key, row) => ({ value: row as Record<string, unknown> }),
  });
  return Object.fromEntries(table.entries());
}
