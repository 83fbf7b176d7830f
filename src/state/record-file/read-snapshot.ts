import { rename } from "node:fs/promises";
import type { Low } from "lowdb";
import type { Logger } from "../../logger.js";
import { CorruptFileError, fileStamp } from "../atomic-json-file.js";
import type { RecordFileReport } from "./record-file-options.js";

/**
 * The snapshot's rows as stored; a snapshot that is not valid JSON is moved aside (named in the
 * report and the log) and the file starts from its journal alone. A read-only reader never moves it.
 */
export async function readSnapshotData(
  db: Low<Record<string, unknown>>,
  options: { path: string; what: string; readOnly?: boolean | undefined; logger: Logger },
  now: () => number,
  report: RecordFileReport,
): Promise<Record<string, unknown>> {
  try {
    await db.read();
    return db.data;
  } catch (err) {
    if (!(err instanceof CorruptFileError) || options.readOnly) throw err;
    const movedTo = `${options.path}.corrupt-${fileStamp(now())}`;
    await rename(options.path, movedTo);
    report.corruptMovedTo = movedTo;
    options.logger.error(
      { file: options.path, movedTo, err },
      `${options.what} is corrupt; moved aside, starting empty`,
    );
    return {};
  }
}
