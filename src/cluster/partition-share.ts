// The partitions a gateway holds in `cluster.owners: "many"` (docs/scale-out.md "N owners"): each
// live member holds at most ceil(count / live members), taking free ones and giving extras up.
// STAND-IN of task `share`'s module (same interface, /work/helpers/s10/DESIGN.md): a pass every
// heartbeat takes free partitions (lowest first) up to the share in one statement and releases the
// extras (highest first) after `beforeRelease`. The lead replaces it with `share`'s at merge.
import type pg from "pg";
import type { Logger } from "../logger.js";
import type { ClusterNode } from "./cluster-node.js";
import { leaseOfPart } from "./cluster-status.js";

export interface PartitionShareOptions {
  node: ClusterNode;
  pool: pg.Pool;
  count: number;
  leaseTtlMs: number;
  heartbeatMs: number;
  logger: Logger;
  /** awaited before partitions are released: the gateway stops its work on them */
  beforeRelease(parts: readonly number[]): Promise<void>;
  /** after each change (taken, released or lost), awaited before the next pass */
  onChange(held: ReadonlySet<number>, previous: ReadonlySet<number>): Promise<void>;
}

export interface PartitionShare {
  held(): ReadonlySet<number>;
  /** takes the first share (may be empty when peers hold every partition), then a pass every heartbeatMs */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The live members, and the partitions a live member other than `incarnation` holds unexpired. */
async function readPeers(pool: pg.Pool, incarnation: string) {
  const { rows } = await pool.query<{ live: number; taken: number[] }>(
    `SELECT (SELECT count(*) FROM cluster_members m WHERE cluster_node_alive(m.incarnation))::int AS live,
       coalesce((SELECT array_agg(substr(l.name, 11)::int) FROM cluster_leases l
         WHERE starts_with(l.name, 'partition:') AND l.owner <> $1 AND l.expires_at > now()
           AND cluster_node_alive(l.owner)), '{}') AS taken`,
    [incarnation],
  );
  return { live: Math.max(1, rows[0]!.live), taken: new Set(rows[0]!.taken) };
}

/** One pass: the partitions held after it (the same set when nothing changed). */
async function pass(options: PartitionShareOptions, held: ReadonlySet<number>): Promise<Set<number>> {
  const { node, count } = options;
  // A lease another gateway took is gone from the node's book (the gateway stops on it anyway).
  const next = new Set([...held].filter((part) => node.held(leaseOfPart(part)) !== undefined));
  const { live, taken } = await readPeers(options.pool, node.incarnation);
  const share = Math.ceil(count / live);
  if (next.size > share) {
    const extras = [...next].sort((a, b) => b - a).slice(0, next.size - share);
    await options.beforeRelease(extras);
    for (const part of extras) {
      next.delete(part);
      await node.release(leaseOfPart(part));
    }
    return next;
  }
  const free = Array.from({ length: count }, (_, part) => part).filter((part) => !taken.has(part) && !next.has(part));
  const wanted = free.slice(0, share - next.size).map(leaseOfPart);
  if (wanted.length === 0) return next;
  // All or none: a peer taking one of them in between leaves them to the next pass.
  const result = await node.acquire(wanted[0]!, wanted.slice(1));
  if ("lease" in result) for (const name of wanted) next.add(Number(name.slice(name.indexOf(":") + 1)));
  return next;
}

/** Whether two sets hold the same partitions. */
function same(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  return a.size === b.size && [...a].every((part) => b.has(part));
}

export function createPartitionShare(options: PartitionShareOptions): PartitionShare {
  let held: ReadonlySet<number> = new Set();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const once = async () => {
    const next = await pass(options, held);
    if (same(next, held)) return;
    const previous = held;
    held = next;
    await options.onChange(held, previous);
  };
  const tick = () => {
    running = once()
      .catch((err: unknown) => options.logger.warn({ err }, "partition share pass failed; trying again next beat"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.heartbeatMs).unref();
      });
  };
  return {
    held: () => held,
    async start() {
      await once();
      if (!stopped) timer = setTimeout(tick, options.heartbeatMs).unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
