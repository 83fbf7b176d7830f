// The gateway's database as its owner writes it (docs/scale-out.md "A fence per partition"): every
// write checks the fences of the partitions it touches; on the global holder (one owner: the only
// one) also the writer lease's, and a write that names none checks the writer lease's alone.
import type pg from "pg";
import type { ClusterNode } from "../cluster/cluster-node.js";
import { leaseOfPart } from "../cluster/cluster-status.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { GlobalOnlyWriteError } from "../state/global-only-write-error.js";

/**
 * The leases fencing writes of partitions `parts` (null: rows of no session), sorted, once each.
 * On the global holder (`global`) always the writer lease too: a gateway of an older version
 * (schema 0009) takes only the writer lease, and a paused ex-holder's write of partitions alone
 * must still be refused once another took the writer lease. On a partition owner without it
 * (`cluster.owners: "many"`) only the partitions' leases: a write naming no partition, or a row
 * of no session, is refused before it is sent ({@link GlobalOnlyWriteError}).
 */
function leasesOf(parts: Iterable<number | null> | undefined, global: boolean): string[] {
  const list = [...(parts ?? [])];
  if (global) return [...new Set([leaseOfPart(null), ...list.map(leaseOfPart)])].sort();
  if (list.length === 0 || list.includes(null))
    throw new GlobalOnlyWriteError("a write that names no partition (or a row of no session) was refused");
  return [...new Set(list.map(leaseOfPart))].sort();
}

/**
 * One transaction begun with the fence check of `leases` (BEGIN, then the check), then `fn`, then
 * COMMIT; rolled back on any failure (the row writer's one-statement batch does not come here: it
 * checks inside its statement). `database.transaction` runs it as `single` (no BEGIN/COMMIT of its
 * own) and still retries it when the connection breaks.
 */
async function fencedTransaction<T>(
  client: pg.PoolClient,
  node: ClusterNode,
  leases: readonly string[],
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  try {
    await node.checkFence(client, leases, { begin: true });
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {}); // a broken connection: the transaction is gone with it
    throw err;
  }
}

/** Options of {@link fenced}. */
export interface FencedOptions {
  /**
   * This gateway holds (or waits for: it is refused until it holds it) the global lease
   * `schema:writer`: every write also carries it. Default true (one owner). False: a partition
   * owner of `cluster.owners: "many"`: writes carry only their partitions' leases.
   */
  global?: boolean;
}

/**
 * `database` whose every write checks the fences (FOR SHARE) of the partitions it touches (its
 * `parts`; see {@link leasesOf} for the writer lease): in a transaction that checks them first, or,
 * for one statement that carries the check itself (`fencedInside`, e.g. the row writer's batch),
 * inside that statement. One statement that only reads (`readOnly`) runs as it is, and so does a
 * transaction that only reads (`snapshot`). Its close leaves the cluster.
 */
export function fenced(database: PostgresDatabase, node: ClusterNode, options: FencedOptions = {}): PostgresDatabase {
  const global = options.global ?? true;
  const leases = (parts: Iterable<number | null> | undefined) => leasesOf(parts, global);
  let closing: Promise<void> | undefined;
  return {
    pool: database.pool,
    schema: database.schema,
    shownUrl: database.shownUrl,
    schemaVersion: database.schemaVersion,
    partitions: database.partitions,
    global,
    health: () => database.health(),
    fence: (parts) => node.fence(leases(parts)),
    async transaction(fn, options) {
      if (options?.snapshot) return database.transaction(fn, options);
      // Read before anything is sent: a write this gateway may not make is refused here.
      const names = options?.single && options.readOnly ? [] : leases(options?.parts);
      return options?.single && (options.fencedInside || options.readOnly)
        ? database.transaction((client) => node.fencedInside(names, () => fn(client)), { single: true })
        : database.transaction((client) => fencedTransaction(client, node, names, fn), { single: true });
    },
    close() {
      closing ??= node.leave().then(() => database.close());
      return closing;
    },
  };
}
