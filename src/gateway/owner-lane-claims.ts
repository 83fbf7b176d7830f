// The owner's lane claims on its fenced database (docs/scale-out.md "Sends claimed per chat lane").
import { claimLanes, pruneLanes } from "../cluster/lane-claim-sql.js";
import { createLaneClaims } from "../cluster/lane-claims.js";
import type { Logger } from "../logger.js";
import { partOf } from "../routing/partition.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** How long a lane's row is kept past its `until`: a day. */
const LANE_ROWS_KEPT_MS = 86_400_000;

/**
 * Before each chunk: whether this owner holds the chunk's lane (src/cluster/lane-claims.ts). A claim
 * is one statement on `database` (fenced: the sending sessions' partition leases, checked inside it),
 * committed before the platform call; it waits out a database outage as every write does.
 */
export function ownerLaneClaims(
  database: PostgresDatabase,
  incarnation: string,
  leaseTtlMs: number,
  { clock, logger }: { clock?: () => number; logger?: Logger } = {},
) {
  return createLaneClaims({
    leaseTtlMs,
    ...(clock && { clock }),
    // Rows a day past their `until` (chats quiet since) go, hourly; a failure is tried an hour later.
    prune() {
      // Every chat's rows, fenced by the writer lease: the global holder's sweep.
      if (database.global === false) return;
      void database
        .transaction((client) => pruneLanes(client, LANE_ROWS_KEPT_MS))
        .then(
          (deleted) => void (deleted > 0 && logger?.debug({ deleted }, "pruned old lane rows")),
          (err: unknown) => logger?.warn({ err }, "old lane rows not pruned; tried again in an hour"),
        );
    },
    claim(lanes, sessionKeys) {
      const parts = sessionKeys.map((key) => partOf(key, database.partitions));
      return database.transaction(
        (client) => claimLanes(client, lanes, incarnation, leaseTtlMs, database.fence?.(parts)),
        { single: true, fencedInside: true, parts },
      );
    },
  });
}
