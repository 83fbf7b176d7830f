// What a core of `cluster.owners: "many"` (docs/scale-out.md "N owners") is wired with besides its
// state: the inbox's forward of entries of sessions held elsewhere (./inbox-forwarding.ts) and the
// hand-off drain's scope (the rows of its partitions, and on the global holder the rows of no part).
// A core of the one owner (or on local files) gets neither: it holds every session.
import type { PostgresDatabase } from "../state/postgres/database.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { type OwnerIntakes, ownerHandoffDrain } from "./handoff-drain.js";
import { inboxForwarding } from "./inbox-forwarding.js";
import { heldSet } from "../state/parted-image.js";

/** The deps of a core that say whether it holds some partitions only. */
export interface ManyCoreDeps {
  database?: PostgresDatabase;
  parts?: readonly number[];
  /** with `parts`: the partitions the routing takes as this core's now (adopt and evict change it: ./core-holding.ts); default `parts` */
  routing?: ReturnType<typeof heldSet>;
  partitionsOnly?: boolean;
  cluster?: { nodeId: string };
}

/** The forward and the drain's scope of a core opened for `deps.parts`; undefined for a core holding every session. */
export function manyWiring(deps: ManyCoreDeps) {
  const { database, parts, cluster } = deps;
  if (!database || !parts || !cluster) return undefined;
  const routing = deps.routing ?? heldSet(parts);
  const heldNow = routing.held;
  const forwarding = inboxForwarding({
    pool: database.pool,
    schema: database.schema,
    nodeId: cluster.nodeId,
    partitions: database.partitions,
    held: heldNow,
  });
  const global = !deps.partitionsOnly;
  return { forwarding, routing, drain: { held: heldNow, global: () => global } };
}

/**
 * The core's drain of the hand-off inbox on a cluster: the one owner's drains every row; with
 * `cluster.owners: "many"` a core drains the rows of its partitions, the global holder's also the
 * rows of no part.
 */
export function coreHandoff(
  deps: ManyCoreDeps & { config: Config },
  intakes: Omit<OwnerIntakes, "held" | "global"> & { database?: PostgresDatabase; logger: Logger },
) {
  const scope = manyWiring(deps)?.drain;
  return ownerHandoffDrain(intakes.database, { ...intakes, ...deps.config.cluster, ...scope });
}
