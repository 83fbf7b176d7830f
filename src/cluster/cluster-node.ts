// One gateway as a member of the cluster of its PostgreSQL schema: it registers, holds its
// liveness lock, beats every `cluster.heartbeatMs` (renewing all of its leases in one statement),
// takes and gives up leases, and checks a lease's fence inside write transactions.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { ClusterConfig } from "../config/schema/cluster.js";
import type { Logger } from "../logger.js";
import type { CarriedFence } from "../state/postgres/database.js";
import { type ClusterStatus, readClusterStatus } from "./cluster-status.js";
import { releaseManyFrom, takeFreeInto } from "./lease-batch.js";
import type { TakenLeases } from "./partition-share-sql.js";
import {
  FencedOutError,
  type HeldLease,
  type LeaseHolder,
  acquireLeases,
  checkFence,
  heartbeat,
  holderWait,
  isFenceRefusal,
  joinMember,
  leaveMember,
  pruneDeadMembers,
  refusedLease,
  releaseLease,
  setMemberAddress,
} from "./lease-sql.js";
import { type Liveness, holdLiveness, livenessKey, waitForRelease } from "./liveness.js";
import { newIncarnation } from "./node-id.js";

/** Options of {@link joinCluster}. */
export interface ClusterNodeOptions {
  /** the schema's pool (search_path set); its options open the liveness and waiting connections */
  pool: pg.Pool;
  schema: string;
  /** `owners`: the gateway's `cluster.owners`, kept in its member row (a joining gateway of another mode is refused) */
  member: { nodeId: string; host: string; pid: number; port: number; address?: string; owners?: "one" | "many" };
  /** the lease timing (`cluster.*` of the config; `owners` is the gateway's, not the member's) */
  cluster: Omit<ClusterConfig, "owners">;
  logger: Logger;
  /** a lease another gateway took over (seen by a heartbeat, a refused write or the liveness lock taken by a later process under this node id); it is no longer held */
  onLost: (lease: HeldLease) => void;
}

/** A running member of the cluster. */
export interface ClusterNode {
  readonly nodeId: string;
  /** this process under the node id: the owner of its leases */
  readonly incarnation: string;
  /** Takes `name` (and the leases `together`, in the same statement, all or none) when free; else says who holds the first one held. */
  acquire(
    name: string,
    together?: readonly string[],
  ): Promise<{ lease: HeldLease } | { holder: LeaseHolder /** the lease found held */; held?: string }>;
  /** Takes `name` (and `together`, as {@link acquire}) as soon as it is free: at once when its holder's liveness lock goes, else when it expires; rejects once `signal` aborts. */
  acquireWhenFree(name: string, signal?: AbortSignal, together?: readonly string[]): Promise<HeldLease>;
  /** Gives `name` up at once, so a peer need not wait for it to expire. */
  release(name: string): Promise<void>;
  /** Takes up to `limit` of the leases `names` that are free (preferred in that order), in one statement; the ones taken. */
  acquireSome(names: readonly string[], limit: number): Promise<TakenLeases>;
  /** Gives the leases `names` up at once, in one statement. */
  releaseMany(names: readonly string[]): Promise<void>;
  /** The lease held under `name`, or undefined. */
  held(name: string): HeldLease | undefined;
  /** When `name` was last taken or renewed, on this process's monotonic clock (performance.now(), read before the statement went out); undefined when not held. */
  renewedAt(name: string): number | undefined;
  /** Renews every lease now, as a heartbeat does (a lease another gateway took is lost); throws when the database does not answer. */
  renewNow(): Promise<void>;
  /** The first statement of a write transaction on the data of the leases `names` (with `begin`, also its BEGIN); throws FencedOutError naming a stale one. A session idle in it longer than `leaseTtlMs` is ended by the server. */
  checkFence(client: pg.ClientBase, names: string | readonly string[], options?: { begin?: boolean }): Promise<void>;
  /** What a statement that checks the fences of `names` itself carries (fence 0 for a lease lost: refused). */
  fence(names: string | readonly string[]): CarriedFence;
  /** Runs such a statement: its refusal by `cluster_check_fences` becomes FencedOutError naming the stale lease (which is lost). */
  fencedInside<T>(names: string | readonly string[], run: () => Promise<T>): Promise<T>;
  /** Records the port the gateway listens on and where peers reach it ("host:port"). */
  listening(port: number, address: string): Promise<void>;
  /** The members of the schema; `keys`: also the owner's session keys. */
  status(options?: { keys?: boolean }): Promise<ClusterStatus>;
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

/** The leases this member holds; `lose` forgets one another gateway took and says so. */
function leaseBook(options: ClusterNodeOptions, incarnation: string) {
  const { nodeId } = options.member;
  const held = new Map<string, HeldLease>();
  const renewed = new Map<string, number>();
  const lose = (lease: HeldLease) => {
    if (held.get(lease.name)?.fence !== lease.fence) return;
    held.delete(lease.name);
    options.logger.warn(
      { nodeId, incarnation, lease: lease.name, fence: lease.fence },
      "another gateway took a lease of this one over",
    );
    options.onLost(lease);
  };
  return { held, renewed, lose, incarnation };
}

/** One renewal of every lease in one statement; a lease held before it and missing from its answer is lost. Throws when the database does not answer. */
function renewing(options: ClusterNodeOptions, book: ReturnType<typeof leaseBook>, liveness: Liveness) {
  return async () => {
    const before = [...book.held.values()];
    const sentAt = performance.now();
    const renewed = await heartbeat(liveness.client() ?? options.pool, book.incarnation, options.cluster.leaseTtlMs);
    const fences = new Map(renewed.map((lease) => [lease.name, lease.fence]));
    for (const lease of renewed) book.renewed.set(lease.name, sentAt);
    for (const lease of before) if (fences.get(lease.name) !== lease.fence) book.lose(lease);
  };
}

/** One beat: a renewal whose failure is logged once (the next beat tries again). */
function beating(options: ClusterNodeOptions, renew: () => Promise<void>) {
  const { nodeId } = options.member;
  let failing = false;
  return async () => {
    try {
      await renew();
      failing = false;
    } catch (err) {
      if (!failing) options.logger.warn({ err, nodeId }, "cluster heartbeat failed; trying again next beat");
      failing = true;
    }
  };
}

/** Takes `name` as soon as it is free: waits on its holder's liveness lock until the lease expires, then asks again. */
async function acquireWhenFree(
  node: ClusterNode,
  pool: pg.Pool,
  name: string,
  signal?: AbortSignal,
  together?: readonly string[],
): Promise<HeldLease> {
  const connect = () => new pg.Client(pool.options);
  for (;;) {
    signal?.throwIfAborted();
    const result = await node.acquire(name, together);
    if ("lease" in result) return result.lease;
    // Wait on the lease still held (the first of the group found held; its holder holds the rest too).
    const wait = await holderWait(pool, result.held ?? name);
    if (wait?.key) await waitForRelease(connect, wait.key, wait.ms + 5, signal);
    else await sleep(50, undefined, signal ? { signal } : {}); // the holder left between the two statements: ask again
  }
}

type LeaseBook = ReturnType<typeof leaseBook>;

/** The parts of a member that keep running until it leaves. */
interface Running {
  stopHeartbeat: () => Promise<void>;
  liveness: Liveness;
  renew: () => Promise<void>;
}

async function acquireInto(options: ClusterNodeOptions, book: LeaseBook, name: string, together: readonly string[]) {
  const sentAt = performance.now();
  const names = [name, ...together.filter((other) => other !== name)];
  const result = await acquireLeases(options.pool, names, book.incarnation, options.cluster.leaseTtlMs);
  if ("holder" in result) return { holder: result.holder, held: result.held };
  for (const lease of result.leases) {
    book.held.set(lease.name, lease);
    book.renewed.set(lease.name, sentAt);
  }
  return { lease: result.leases[0]! };
}

/** The leases held under `names` (fence 0 for one not held: its check is refused). */
function heldOf(book: LeaseBook, names: string | readonly string[]): HeldLease[] {
  const all = typeof names === "string" ? [names] : names;
  return all.map((name) => book.held.get(name) ?? { name, fence: 0 });
}

async function releaseFrom(options: ClusterNodeOptions, book: LeaseBook, name: string): Promise<void> {
  const lease = book.held.get(name);
  book.held.delete(name);
  if (lease) await releaseLease(options.pool, book.incarnation, lease);
}

async function checkBookFence(
  options: ClusterNodeOptions,
  book: LeaseBook,
  client: pg.ClientBase,
  names: string | readonly string[],
  check?: { begin?: boolean },
): Promise<void> {
  const leases = heldOf(book, names);
  try {
    await checkFence(client, book.incarnation, leases, { ...check, idleTimeoutMs: options.cluster.leaseTtlMs });
  } catch (err) {
    const stale = err instanceof FencedOutError ? refusedLease(err.cause, leases) : undefined;
    if (stale) book.lose(stale);
    throw err;
  }
}

async function fencedRun<T>(book: LeaseBook, names: string | readonly string[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!isFenceRefusal(err)) throw err;
    const lease = refusedLease(err, heldOf(book, names)) ?? { name: "", fence: 0 };
    book.lose(lease);
    throw new FencedOutError(lease, book.incarnation, { cause: err });
  }
}

async function leaveCluster(options: ClusterNodeOptions, book: LeaseBook, running: Running): Promise<void> {
  book.held.clear();
  await running.stopHeartbeat();
  await leaveMember(options.pool, book.incarnation).catch((err: unknown) =>
    options.logger.warn({ err, nodeId: options.member.nodeId }, "cluster leave failed"),
  );
  // The liveness lock goes last: a peer never sees this member dead while its row says otherwise.
  await running.liveness.close();
}

/** The member's operations over its book of leases. */
function memberNode(options: ClusterNodeOptions, book: LeaseBook, running: Running) {
  const { pool } = options;
  const { incarnation } = book;
  const node: ClusterNode = {
    nodeId: options.member.nodeId,
    incarnation,
    acquire: (name, together = []) => acquireInto(options, book, name, together),
    acquireWhenFree: (name, signal, together) => acquireWhenFree(node, pool, name, signal, together),
    release: (name) => releaseFrom(options, book, name),
    acquireSome: (names, limit) => takeFreeInto(options, book, names, limit),
    releaseMany: (names) => releaseManyFrom(options.pool, book, names),
    held: (name) => book.held.get(name),
    renewedAt: (name) => (book.held.has(name) ? book.renewed.get(name) : undefined),
    renewNow: running.renew,
    checkFence: (client, name, check) => checkBookFence(options, book, client, name, check),
    fence(names) {
      const leases = heldOf(book, names);
      return { leases: leases.map((l) => l.name), owner: incarnation, fences: leases.map((l) => l.fence) };
    },
    fencedInside: (names, run) => fencedRun(book, names, run),
    listening: (port, address) => setMemberAddress(pool, incarnation, port, address),
    status: (statusOptions) => readClusterStatus(pool, statusOptions),
    leave: () => leaveCluster(options, book, running),
  };
  return node;
}

/** A later process under this node id holds its liveness lock: every lease of this one is lost (the gateway stops). */
function takenOver(options: ClusterNodeOptions, book: ReturnType<typeof leaseBook>) {
  return () => {
    options.logger.error(
      { nodeId: options.member.nodeId, incarnation: book.incarnation },
      "another process took this node id over while its liveness connection was down",
    );
    for (const lease of [...book.held.values()]) book.lose(lease);
  };
}

/**
 * Joins the cluster of the pool's schema as a new incarnation of its node id: takes the node's
 * liveness lock (a node id in use by a live gateway is refused), registers the member and starts the heartbeat.
 */
export async function joinCluster(options: ClusterNodeOptions): Promise<ClusterNode> {
  const { pool, logger, cluster } = options;
  const { nodeId } = options.member;
  const book = leaseBook(options, newIncarnation(nodeId));
  const lockKey = livenessKey(options.schema, nodeId);
  const connect = () => new pg.Client(pool.options);
  const liveness = await holdLiveness({ connect, key: lockKey, nodeId, logger, onTakenOver: takenOver(options, book) });
  try {
    await pruneDeadMembers(pool, cluster.leaseTtlMs);
    await joinMember(pool, { ...options.member, incarnation: book.incarnation, lockKey });
  } catch (err) {
    await liveness.close();
    throw err;
  }
  const renew = renewing(options, book, liveness);
  const stopHeartbeat = startHeartbeat({ beat: beating(options, renew) }, cluster.heartbeatMs);
  return memberNode(options, book, { stopHeartbeat, liveness, renew });
}
