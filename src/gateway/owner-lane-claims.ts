// The owner's lane claims on its fenced database (docs/scale-out.md "Sends claimed per chat lane").
import { claimLanes, pruneLanes, releaseLanes } from "../cluster/lane-claim-sql.js";
import { type LaneClaims, createLaneClaims } from "../cluster/lane-claims.js";
import type { Logger } from "../logger.js";
import { partOf } from "../routing/partition.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** How long a lane's row is kept past its `until`: a day. */
const LANE_ROWS_KEPT_MS = 86_400_000;

/**
 * One statement on `database` (unfenced: it only ends this holder's own claims sooner) releasing
 * `lanes`; it waits out an outage as every write does, and a failure is logged: the claims then run out.
 */
function releaseOn(database: PostgresDatabase, incarnation: string, logger: Logger | undefined) {
  return async (lanes: readonly string[] | "all") => {
    try {
      await database.transaction((client) => releaseLanes(client, lanes, incarnation), { single: true });
    } catch (err) {
      logger?.warn({ err, lanes }, "send lanes not released; they run out at their claim's end");
    }
  };
}

/** Options of {@link ownerLaneClaims}. */
export interface OwnerLaneOptions {
  clock?: () => number;
  logger?: Logger;
  /**
   * The unfenced database to release lanes on (`cluster.owners: "many"`, where a chat's sessions may
   * have two owners): a lane whose queue emptied, and every lane at a core's stop. None (one owner):
   * nothing is released; a standby that takes over finds the lanes of a holder without leases free.
   */
  releaseOn?: PostgresDatabase;
}

/**
 * Before each chunk: whether this owner holds the chunk's lane (src/cluster/lane-claims.ts). A claim
 * is one statement on `database` (fenced: the sending sessions' partition leases, checked inside it),
 * committed before the platform call; it waits out a database outage as every write does.
 */
export function ownerLaneClaims(
  database: PostgresDatabase,
  incarnation: string,
  leaseTtlMs: number,
  { clock, logger, releaseOn: plain }: OwnerLaneOptions = {},
): LaneClaims {
  return createLaneClaims({
    leaseTtlMs,
    ...(clock && { clock }),
    ...(plain && { release: releaseOn(plain, incarnation, logger) }),
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
