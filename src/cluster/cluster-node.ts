// One gateway as a member of the cluster of its PostgreSQL schema: it registers, holds its
// liveness lock, beats every `cluster.heartbeatMs` (renewing all of its leases in one statement),
// takes and gives up leases, and checks a lease's fence inside write transactions.
import pg from "pg";
import type { ClusterConfig } from "../config/schema/cluster.js";
import type { Logger } from "../logger.js";
import { type ClusterStatus, readClusterStatus } from "./cluster-status.js";
import {
  FencedOutError,
  type HeldLease,
  type LeaseHolder,
  acquireLease,
  checkFence,
  heartbeat,
  joinMember,
  leaveMember,
  pruneDeadMembers,
  releaseLease,
  setMemberPort,
} from "./lease-sql.js";
import { holdLiveness, livenessKey, waitForRelease } from "./liveness.js";

/** Options of {@link joinCluster}. */
export interface ClusterNodeOptions {
  /** the schema's pool (search_path set); its options open the liveness and waiting connections */
  pool: pg.Pool;
  schema: string;
  member: { nodeId: string; host: string; pid: number; port: number };
  cluster: ClusterConfig;
  logger: Logger;
  /** a lease another gateway took over (seen by a heartbeat or a refused write); it is no longer held */
  onLost: (lease: HeldLease) => void;
}

/** A running member of the cluster. */
export interface ClusterNode {
  readonly nodeId: string;
  /** Takes `name` when it is free; else says who holds it. */
  acquire(name: string): Promise<{ lease: HeldLease } | { holder: LeaseHolder }>;
  /** Takes `name` as soon as it is free: at once when its holder's liveness lock goes, else when it expires. */
  acquireWhenFree(name: string): Promise<HeldLease>;
  /** Gives `name` up at once, so a peer need not wait for it to expire. */
  release(name: string): Promise<void>;
  /** The lease held under `name`, or undefined. */
  held(name: string): HeldLease | undefined;
  /** The first statement of a write transaction on `name`'s data; throws FencedOutError when stale. */
  checkFence(client: pg.ClientBase, name: string): Promise<void>;
  /** Records the port the gateway listens on. */
  listening(port: number): Promise<void>;
  status(): Promise<ClusterStatus>;
  /** A clean stop: leases released, member row removed, liveness lock let go. */
  leave(): Promise<void>;
}

/** Heartbeats on a chained timer (never two at once); a lease missing from a beat's answer is lost. */
function startHeartbeat(node: { beat(): Promise<void> }, everyMs: number) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const next = () => {
    if (!stopped) timer = setTimeout(tick, everyMs).unref();
  };
  const tick = () => {
    running = node.beat().finally(next);
  };
  next();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}

/** How long to wait on the holder of `name`: its liveness key and the ms until it expires. */
async function holderWait(pool: pg.Pool, name: string): Promise<{ key: string | null; ms: number } | undefined> {
  const { rows } = await pool.query<{ key: string | null; ms: number }>(
    `SELECT m.lock_key AS key, greatest(0, extract(epoch FROM l.expires_at - now()) * 1000)::float8 AS ms
     FROM cluster_leases l LEFT JOIN cluster_members m ON m.node_id = l.owner WHERE l.name = $1`,
    [name],
  );
  return rows[0];
}

/**
 * Joins the cluster of the pool's schema: takes the node's liveness lock (a node id in use by a
 * live gateway is refused), registers the member and starts the heartbeat.
 */
export async function joinCluster(options: ClusterNodeOptions): Promise<ClusterNode> {
  const { pool, logger, cluster } = options;
  const { nodeId } = options.member;
  const connect = () => new pg.Client(pool.options);
  const lockKey = livenessKey(options.schema, nodeId);
  const liveness = await holdLiveness({ connect, key: lockKey, nodeId, logger });
  const held = new Map<string, HeldLease>();
  const lose = (lease: HeldLease) => {
    if (held.get(lease.name)?.fence !== lease.fence) return;
    held.delete(lease.name);
    logger.warn({ nodeId, lease: lease.name, fence: lease.fence }, "another gateway took a lease of this one over");
    options.onLost(lease);
  };
  let beatFailing = false;
  const beat = async () => {
    const before = [...held.values()];
    try {
      const renewed = await heartbeat(liveness.client() ?? pool, nodeId, cluster.leaseTtlMs);
      beatFailing = false;
      for (const lease of before)
        if (!renewed.some((r) => r.name === lease.name && r.fence === lease.fence)) lose(lease);
    } catch (err) {
      if (!beatFailing) logger.warn({ err, nodeId }, "cluster heartbeat failed; trying again next beat");
      beatFailing = true;
    }
  };
  try {
    await pruneDeadMembers(pool, cluster.leaseTtlMs);
    await joinMember(pool, { ...options.member, lockKey });
  } catch (err) {
    await liveness.close();
    throw err;
  }
  const stopHeartbeat = startHeartbeat({ beat }, cluster.heartbeatMs);
  const node: ClusterNode = {
    nodeId,
    async acquire(name) {
      const result = await acquireLease(pool, name, nodeId, cluster.leaseTtlMs);
      if ("lease" in result) held.set(name, result.lease);
      return result;
    },
    async acquireWhenFree(name) {
      for (;;) {
        const result = await node.acquire(name);
        if ("lease" in result) return result.lease;
        const wait = await holderWait(pool, name);
        if (wait?.key) await waitForRelease(connect, wait.key, wait.ms + 5);
      }
    },
    async release(name) {
      const lease = held.get(name);
      held.delete(name);
      if (lease) await releaseLease(pool, nodeId, lease);
    },
    held: (name) => held.get(name),
    async checkFence(client, name) {
      const lease = held.get(name) ?? { name, fence: 0 };
      try {
        await checkFence(client, nodeId, lease);
      } catch (err) {
        if (err instanceof FencedOutError) lose(lease);
        throw err;
      }
    },
    listening: (port) => setMemberPort(pool, nodeId, port),
    status: () => readClusterStatus(pool),
    async leave() {
      await stopHeartbeat();
      held.clear();
      await leaveMember(pool, nodeId).catch((err: unknown) => logger.warn({ err, nodeId }, "cluster leave failed"));
      await liveness.close();
    },
  };
  return node;
}
