// A member's share of the schema's partitions (docs/scale-out.md "Partition share (step 7)"): each
// live member holds at most ceil(count / live members) partition leases. A pass, every heartbeatMs
// on a chained timer (never two at once), takes free partitions up to that share in one statement,
// or, above it after a join, lets the gateway stop its work on the extras and then releases them in
// one statement, so a peer can take them at once (those with no work on this gateway first). A join and each give-back are announced (NOTIFY on
// the schema's share channel), and a peer's death frees its liveness lock, which a connection per
// peer waits on: either way a pass runs now instead of at the next one. The node's heartbeat renews
// what it holds.
import pg from "pg";
import type { Logger } from "../logger.js";
import type { ClusterNode } from "./cluster-node.js";
import { leaseOfPart } from "./cluster-status.js";
import { listenChannel } from "./listen-channel.js";
import { type LiveMember, liveMembers, notifyShare, shareChannel } from "./partition-share-sql.js";
import { watchPeers } from "./peer-watch.js";

/** Options of {@link createPartitionShare}. */
export interface PartitionShareOptions {
  node: ClusterNode;
  pool: pg.Pool;
  /** the schema's partition count (its `cluster_settings` row `partitions`) */
  count: number;
  leaseTtlMs: number;
  /** the pause between passes */
  heartbeatMs: number;
  logger: Logger;
  /** awaited before partitions are released: the gateway stops its work on them */
  beforeRelease(parts: readonly number[]): Promise<void>;
  /** the partitions with work on this gateway now (a turn running, a reply not sent): a give-back takes the others first; default none */
  busy?(): ReadonlySet<number>;
  /** after each change (taken, released or lost), awaited before the next pass */
  onChange(held: ReadonlySet<number>, previous: ReadonlySet<number>): Promise<void>;
}

/** A member's running share. */
export interface PartitionShare {
  held(): ReadonlySet<number>;
  /** takes the first share (may be empty when peers hold every partition), then a pass every heartbeatMs */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The order in which a member prefers free partitions: from the start of its slice (its rank among
 * the live members times the share), round the ring. Members starting together ask for disjoint
 * slices, so they do not wait on each other's rows; any free one is still taken in the end.
 */
export function preferredParts(count: number, rank: number, live: number): number[] {
  const from = (rank * Math.ceil(count / live)) % count;
  return Array.from({ length: count }, (_, i) => (from + i) % count);
}

/** The extras a member above its share gives up: those with no work first (`busy`), the highest first among equals. */
export function extraParts(held: ReadonlySet<number>, share: number, busy: ReadonlySet<number> = new Set()): number[] {
  const rank = (part: number) => (busy.has(part) ? 1 : 0);
  return [...held].sort((a, b) => rank(a) - rank(b) || b - a).slice(0, Math.max(0, held.size - share));
}

/** The share's state and its one change path: every change is reported through `onChange`. */
function shareState(options: PartitionShareOptions) {
  let held: ReadonlySet<number> = new Set();
  const state = {
    held: () => held,
    change: async (next: ReadonlySet<number>, what: Record<string, number[]>) => {
      const previous = held;
      held = next;
      options.logger.info({ nodeId: options.node.nodeId, ...what, held: held.size }, "partition share changed");
      await options.onChange(held, previous);
    },
    /** tells the peers to run a pass now (a NOTIFY, once listening) */
    announce: async () => {},
    /** runs a pass again as soon as this one ends (once created) */
    kick: () => {},
    /** waits on these peers' liveness locks (once started) */
    watch: (_peers: readonly LiveMember[]) => {},
  };
  return state;
}

type State = ReturnType<typeof shareState>;

/** Partitions another gateway took (the heartbeat or a refused write found them lost): reported as a change. */
async function noticeLost(options: PartitionShareOptions, state: State): Promise<void> {
  const lost = [...state.held()].filter((n) => !options.node.held(leaseOfPart(n)));
  if (lost.length === 0) return;
  await state.change(new Set([...state.held()].filter((n) => !lost.includes(n))), { lost });
}

/** Takes up to `wanted` free partitions, preferred from this member's slice. */
async function take(options: PartitionShareOptions, state: State, wanted: number, live: LiveMember[]): Promise<void> {
  const rank = live.findIndex((member) => member.incarnation === options.node.incarnation);
  const parts = new Map(
    preferredParts(options.count, rank, live.length)
      .filter((n) => !state.held().has(n))
      .map((n) => [leaseOfPart(n), n]),
  );
  const { leases, contended } = await options.node.acquireSome([...parts.keys()], wanted);
  // A peer took some of the ones seen free first (two members after a death): others may be free, so a pass again now.
  if (contended) state.kick();
  if (leases.length === 0) return;
  const taken = leases.map((lease) => parts.get(lease.name)!);
  await state.change(new Set([...state.held(), ...taken]), { taken });
}

/** Gives the extras above `share` up: the gateway stops its work on them first, then one release. */
async function giveBack(options: PartitionShareOptions, state: State, share: number): Promise<void> {
  const released = extraParts(state.held(), share, options.busy?.());
  await options.beforeRelease(released);
  await options.node.releaseMany(released.map(leaseOfPart));
  await state.change(new Set([...state.held()].filter((n) => !released.includes(n))), { released });
  await state.announce(); // the newcomer takes them now, not at its next pass
}

/** One pass: losses noticed, the live members read, then a take below the share or a give-back above it. */
async function pass(options: PartitionShareOptions, state: State): Promise<void> {
  await noticeLost(options, state);
  const live = await liveMembers(options.pool, options.node.incarnation, options.leaseTtlMs);
  state.watch(live.filter((member) => member.incarnation !== options.node.incarnation));
  const share = Math.ceil(options.count / live.length);
  const held = state.held().size;
  if (held < share) await take(options, state, share - held, live);
  else if (held > share) await giveBack(options, state, share);
}

/** A pass whose failure (the database away) is logged once; the next pass tries again. */
function passing(options: PartitionShareOptions, state: State): () => Promise<void> {
  let failing = false;
  return async () => {
    try {
      await pass(options, state);
      failing = false;
    } catch (err) {
      if (!failing)
        options.logger.warn(
          { err, nodeId: options.node.nodeId },
          "partition share pass failed; trying again next pass",
        );
      failing = true;
    }
  };
}

/** Passes on a chained timer, never two at once; `kick` runs one now, or right after the running one. */
function passLoop(run: () => Promise<void>, everyMs: number) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let again = false;
  const tick = (): Promise<void> => {
    clearTimeout(timer);
    running = run().finally(() => {
      running = undefined;
      const soon = again;
      again = false;
      if (!stopped) timer = setTimeout(tick, soon ? 0 : everyMs).unref();
    });
    return running;
  };
  return {
    start: tick,
    kick() {
      if (stopped) return;
      if (running) again = true;
      else void tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** Listens on the schema's share channel: a peer joined or gave partitions back, so a pass runs now. */
async function listening(options: PartitionShareOptions, state: State, kick: () => void) {
  const { rows } = await options.pool.query<{ schema: string }>("SELECT current_schema() AS schema");
  const channel = shareChannel(rows[0]!.schema);
  state.announce = () => notifyShare(options.pool, channel, options.node.incarnation);
  return listenChannel({
    pool: options.pool,
    channel,
    logger: options.logger,
    // undefined: (re)connected, a notification may have been missed: a pass catches up.
    onNotify: (from) => from !== options.node.incarnation && kick(),
    warning: "partition share changes not listened to; a pass every heartbeatMs meanwhile",
  });
}

/** Creates a member's partition share; nothing runs until `start`. */
export function createPartitionShare(options: PartitionShareOptions): PartitionShare {
  const state = shareState(options);
  const loop = passLoop(passing(options, state), options.heartbeatMs);
  let listener: { open(): Promise<void>; close(): Promise<void> } | undefined;
  // A peer's death frees its liveness lock: a pass takes its partitions now.
  const peers = watchPeers({
    connect: () => new pg.Client(options.pool.options),
    logger: options.logger,
    onDeath: () => loop.kick(),
  });
  state.watch = peers.watch;
  state.kick = loop.kick;
  return {
    held: state.held,
    async start() {
      // The channel lookup (one statement) fails before any pass runs when the database is away.
      listener = await listening(options, state, loop.kick);
      await loop.start();
      await listener.open();
      // A join: the others run a pass now and give their extras back (each then announces its release).
      await state
        .announce()
        .catch((err: unknown) =>
          options.logger.warn(
            { err, nodeId: options.node.nodeId },
            "partition share join not announced; peers see it at their next pass",
          ),
        );
    },
    async stop() {
      await listener?.close();
      await loop.stop();
      peers.stop();
    },
  };
}
