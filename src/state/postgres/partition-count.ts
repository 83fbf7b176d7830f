// The schema's partition count (migration 0008): every gateway on a schema hashes session keys
// modulo the same number, read from the schema, never from its own config.
import type pg from "pg";
import { SwitchboardError } from "../../errors.js";
import { DEFAULT_PARTITIONS } from "../../routing/partition.js";

/** The migration that adds the `part` columns and the `partitions` setting. */
const PARTITIONS_VERSION = 8;

/**
 * The schema's partition count (`cluster_settings` row `partitions`); a schema older than
 * migration 0008 (opened read-only) has none yet and gets the default it will be given.
 */
export async function readPartitions(db: pg.Pool, schemaVersion: number): Promise<number> {
  if (schemaVersion < PARTITIONS_VERSION) return DEFAULT_PARTITIONS;
  const { rows } = await db.query<{ value: string }>("SELECT value FROM cluster_settings WHERE name = 'partitions'");
  const value = rows[0]?.value;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 32_767)
    throw new SwitchboardError(
      "DATABASE_UNAVAILABLE",
      `cluster_settings row "partitions" holds ${JSON.stringify(value ?? null)}, not a partition count from 1 to 32767: ` +
        "restore it to the count the schema was created with (256 unless changed)",
    );
  return count;
}
