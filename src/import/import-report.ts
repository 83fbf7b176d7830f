/** One thing the import could not bring over, or changed on the way, with why. */
interface ImportNote {
  /** a config path (`channels.telegram.streamMode`) or a file of the source home */
  where: string;
  reason: string;
}

/** Everything an import tells its user at the end. */
export interface ImportReport {
  /** what could not be mapped, each with its reason */
  unmapped: ImportNote[];
  /** what was mapped with a change the user should know about */
  notes: ImportNote[];
}

/** An empty report to fill. */
export function emptyReport(): ImportReport {
  return { unmapped: [], notes: [] };
}

/** A plain object, not an array or null. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
