// The owner's lane claims on its fenced database (docs/scale-out.md "Sends claimed per chat lane").
import { claimLanes } from "../cluster/lane-claim-sql.js";
import { createLaneClaims } from "../cluster/lane-claims.js";
import { partOf } from "../routing/partition.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/**
 * Before each chunk: whether this owner holds the chunk's lane (src/cluster/lane-claims.ts). A claim
 * is one statement on `database` (fenced: the sending sessions' partition leases, checked inside it),
 * committed before the platform call; it waits out a database outage as every write does.
 */
export function ownerLaneClaims(
  database: PostgresDatabase,
  incarnation: string,
  leaseTtlMs: number,
  clock?: () => number,
) {
  return createLaneClaims({
    leaseTtlMs,
    ...(clock && { clock }),
    claim(lanes, sessionKeys) {
      const parts = sessionKeys.map((key) => partOf(key, database.partitions));
      return database.transaction(
        (client) => claimLanes(client, lanes, incarnation, leaseTtlMs, database.fence?.(parts)),
        { single: true, fencedInside: true, parts },
      );
    },
  });
}
