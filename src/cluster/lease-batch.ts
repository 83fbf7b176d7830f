// Leases taken and given up many at a time in a member's lease book (./cluster-node.ts): the
// partition share (./partition-share.ts) takes its share of the schema's partitions and gives
// extras back, each in one statement, and the heartbeat then renews and fence-checks them as any lease.
import type pg from "pg";
import type { ClusterConfig } from "../config/schema/cluster.js";
import { type HeldLease, releaseLeases } from "./lease-sql.js";
import { type TakenLeases, takeFreeLeases } from "./partition-share-sql.js";

/** The part of a member's lease book these need. */
interface Book {
  readonly incarnation: string;
  held: Map<string, HeldLease>;
  /** when each lease was last taken or renewed (performance.now(), read before the statement went out) */
  renewed: Map<string, number>;
}

/** Takes up to `limit` of the free leases among `names` (preferred in that order) and records them in `book`. */
export async function takeFreeInto(
  options: { pool: pg.Pool; cluster: Pick<ClusterConfig, "leaseTtlMs"> },
  book: Book,
  names: readonly string[],
  limit: number,
): Promise<TakenLeases> {
  const sentAt = performance.now();
  const taken = await takeFreeLeases(options.pool, names, book.incarnation, options.cluster.leaseTtlMs, limit);
  for (const lease of taken.leases) {
    book.held.set(lease.name, lease);
    book.renewed.set(lease.name, sentAt);
  }
  return taken;
}

/** Forgets the leases `names` in `book`, then gives them up at once in one statement (those still ours). */
export async function releaseManyFrom(pool: pg.Pool, book: Book, names: readonly string[]): Promise<void> {
  const leases = names.flatMap((name) => book.held.get(name) ?? []);
  for (const lease of leases) book.held.delete(lease.name);
  await releaseLeases(pool, book.incarnation, leases);
}
