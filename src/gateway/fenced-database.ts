// The gateway's database as its owner writes it (docs/scale-out.md "A fence per partition"): every
// write checks the fences of the partitions it touches, or the writer lease's when it names none.
import type pg from "pg";
import type { ClusterNode } from "../cluster/cluster-node.js";
import { leaseOfPart } from "../cluster/cluster-status.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/**
 * The leases fencing writes of partitions `parts` (null: rows of no session), sorted, once each:
 * always the writer lease too, while one owner holds every partition (until step 7 of "The way
 * there"): a gateway of an older version (schema 0009) takes only the writer lease, and a paused
 * ex-owner's write of partitions alone must still be refused once it has.
 */
function oneOwnerLeasesOf(parts: Iterable<number | null> = []): string[] {
  return [...new Set([leaseOfPart(null), ...[...parts].map(leaseOfPart)])].sort();
}

/**
 * `cluster.owners: "many"` (step 7): a write of partitions carries only their leases; one naming
 * none (rows of no session) the writer lease, held by the global holder alone. MINIMAL STAND-IN of
 * task `fences`' option (same signature); the lead takes `fences`' version at merge.
 */
function shareLeasesOf(parts: Iterable<number | null> = []): string[] {
  const named = [...parts];
  return named.length === 0 ? [leaseOfPart(null)] : [...new Set(named.map(leaseOfPart))].sort();
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

/**
 * `database` whose every write checks the fences (FOR SHARE) of the partitions it touches (its
 * `parts`; rows of no session and writes that name none: the writer lease): in a transaction that
 * checks them first, or, for one statement that carries the check itself (`fencedInside`, e.g. the
 * row writer's batch), inside that statement. One statement that only reads (`readOnly`) runs as
 * it is, and so does a transaction that only reads (`snapshot`). Its close leaves the cluster.
 */
export function fenced(
  database: PostgresDatabase,
  node: ClusterNode,
  options?: { global?: boolean },
): PostgresDatabase {
  const leasesOf = options ? shareLeasesOf : oneOwnerLeasesOf;
  let closing: Promise<void> | undefined;
  return {
    pool: database.pool,
    schema: database.schema,
    shownUrl: database.shownUrl,
    schemaVersion: database.schemaVersion,
    partitions: database.partitions,
    health: () => database.health(),
    fence: (parts) => node.fence(leasesOf(parts)),
    transaction: (fn, options) =>
      options?.snapshot
        ? database.transaction(fn, options)
        : options?.single && (options.fencedInside || options.readOnly)
          ? database.transaction((client) => node.fencedInside(leasesOf(options.parts), () => fn(client)), {
              single: true,
            })
          : database.transaction((client) => fencedTransaction(client, node, leasesOf(options?.parts), fn), {
              single: true,
            }),
    close() {
      closing ??= node.leave().then(() => database.close());
      return closing;
    },
  };
}
