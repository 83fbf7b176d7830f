// The image side of a port whose partitions change while it runs (docs/scale-out.md "Partitions
// adopted and evicted one by one"): which partitions are held now, and each open per-session
// table's rows moved into or out of its image. The memory port (tests) and the PostgreSQL port
// share it; each reads the rows of adopted partitions from its own storage.
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { TableSpec } from "./state-port.js";

/** One open table as the parted image sees it: its spec and its checked image (the maps `imageTable` reads). */
export interface PartedTable {
  spec: TableSpec<object>;
  loaded: { valid: Map<string, object>; invalid: Map<string, unknown> };
}

/** The partition of a row of `spec` (null: a row of no session, held by every set). */
export function rowPartOf(spec: TableSpec<object>, partOf: (sessionKey: string) => number) {
  return (key: string, row: object | undefined): number | null => {
    const session = spec.sessionOf && row !== undefined ? spec.sessionOf(key, row) : undefined;
    return session === undefined ? null : partOf(session);
  };
}

/** The held set, changed by adopt and evict; `holds(null)` (a row of no session) is always true. */
export function heldSet(initial: readonly number[]) {
  const held = new Set(initial);
  return {
    held: (): ReadonlySet<number> => held,
    holds: (part: number | null) => part === null || held.has(part),
    add(parts: readonly number[]): void {
      for (const part of parts) held.add(part);
    },
    remove(parts: readonly number[]): void {
      for (const part of parts) held.delete(part);
    },
  };
}

/** Adds checked rows (`valid`, `invalid`) to a table's image and tells its store (`onAdopt`). */
export function addToImage(
  table: PartedTable,
  rows: { valid: Map<string, object>; invalid: Map<string, unknown> },
): void {
  for (const [key, row] of rows.valid) table.loaded.valid.set(key, row);
  for (const [key, row] of rows.invalid) table.loaded.invalid.set(key, row);
  if (rows.valid.size > 0) table.spec.onAdopt?.([...rows.valid]);
}

/** Takes the rows of `parts` out of a table's image and tells its store (`onEvict`). */
export function removeFromImage(
  table: PartedTable,
  parts: ReadonlySet<number>,
  partOfRow: ReturnType<typeof rowPartOf>,
) {
  const left: Array<[string, object]> = [];
  for (const [key, row] of table.loaded.valid) {
    const part = partOfRow(key, row);
    if (part !== null && parts.has(part)) left.push([key, row]);
  }
  for (const [key] of left) table.loaded.valid.delete(key);
  if (left.length > 0) table.spec.onEvict?.(left);
}

/** The refusal of a write of a row of partition `part`, which this port does not hold (now). */
export function notHeld(name: string, key: string, part: number, shown: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `state table "${name}": row "${key}" belongs to partition ${part}, not one of the partitions this port holds (${shown}); only the gateway holding partition ${part} writes it`,
  );
}
