// The core of a gateway with `cluster.owners: "many"` (docs/scale-out.md "N owners"): opened for the
// partitions its share holds, and opened again when they change (the running one is stopped first:
// its turns drain, what is left replays from the inbox at the next holder's open). A partition core
// runs its sessions' work only; the global holder's also runs its channel accounts, cron and sweeps,
// and serves the clients on the gateway's server. Between two cores of the global holder a standby
// front serves (503 with Retry-After: the writer lease's holder is this gateway): nothing half-open serves.
import type { Standby } from "./standby-server.js";
import { heldParts } from "../state/postgres/held-parts.js";
import { heldSet } from "../state/parted-image.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { DRAIN_MS } from "./core-lifecycle.js";
import { type GatewayCore, createGatewayCore } from "./gateway-core.js";
import type { GatewayServer } from "./gateway-server.js";
import type { ManyCluster } from "./many-cluster.js";
import { corePeers } from "./core-peers.js";
import type { PartialImage } from "./partial-image.js";
import { storedEntry } from "./committed-reads.js";
import { partOf } from "../routing/partition.js";
import type { PeerCall } from "../cluster/peer-call.js";
import type { PeerHandlers } from "./peer-handlers.js";
import { servePeerMethods } from "./peer-methods.js";
import { type Parts, type StartGatewayOptions, inboundSink } from "./start-parts.js";

/** What {@link coreSlot} opens cores with. */
export interface CoreSlotDeps {
  options: StartGatewayOptions;
  parts: Parts;
  /** the metrics a core of each role counts with (./start-many.ts `rewatchable`: the gauges read every core open now) */
  metricsOf?: (role: "mover" | "front") => Parts["metrics"];
  cluster: ManyCluster;
  /** the member's fenced database (./many-cluster.ts), open for every core */
  database: PostgresDatabase;
  /** the standby front serving the server now (until the first global core) */
  standby: Standby;
  /** serves the standby front again (before a global core stops) */
  serveStandby(): Standby;
  /** the gateway's routes for `core` on the server (the standby's listeners have just gone) */
  listen(core: GatewayCore): Promise<GatewayServer>;
  /**
   * The process's peer calls: each core serves its per-session writes there while open and forwards
   * to others with `call`; its adapters call the global holder with it (WhatsApp sends).
   */
  peer: { handlers: PeerHandlers; call: PeerCall };
}

/** How a change reached the core: a core opened for the set, or partitions moved into or out of the running one. */
type Change = "opened" | "adopted" | "evicted";

/**
 * One info line per change: what changed (`change`, and `moved`: the partitions adopted or
 * evicted), how many partitions are held now, which, the sessions loaded, how long the change took
 * (`ms`) and how long no core ran (`outageMs`: from the stop of the one before, releases included;
 * 0 for a move, which stops nothing).
 */
async function logHolding(
  deps: CoreSlotDeps,
  held: readonly number[],
  core: GatewayCore | undefined,
  times: { ms: number; outageMs: number; change: Change; moved?: readonly number[]; cut?: boolean },
) {
  const opened = core ? await core.sessions.all() : [];
  const sessions = opened.reduce((sum, agent) => sum + agent.store.size(), 0);
  const shownOf = (list: readonly number[]) =>
    list.length === 0 ? "none" : heldParts(list, deps.database.partitions).shown;
  const { change, moved, cut } = times;
  deps.options.logger.info(
    {
      change,
      ...(moved && { moved: shownOf(moved) }),
      ...(cut && { cut }),
      count: held.length,
      parts: shownOf(held),
      sessions,
      global: deps.cluster.global(),
      ms: Math.round(times.ms),
      outageMs: Math.round(times.outageMs),
    },
    "holding partitions",
  );
}

/** A running core: whether it is the global holder's, and the removal of its peer methods. */
interface Running {
  core: GatewayCore;
  global: boolean;
  unserve?: () => void;
}

/**
 * The gateway's cores; every open, move and stop runs after the one before it. One core holds the
 * member's partitions (`mover`; on a cold start the global holder's, serving clients too). A member
 * that becomes the global holder while its partition core runs opens the global core beside it
 * (`front`: no partitions of its own, the channel accounts, cron, sweeps and clients), so its
 * partitions' turns run on untouched. A change of the share moves partitions into or out of
 * `mover` (./core-holding.ts).
 */
export function coreSlot(deps: CoreSlotDeps) {
  const { cluster } = deps;
  let mover: Running | undefined;
  let front: Running | undefined;
  let listening: GatewayServer | undefined;
  let standby: Standby | undefined = deps.standby;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };
  let stoppedAt: number | undefined;
  const heldList = () => [...(mover?.core.holding?.held() ?? [])].sort((a, b) => a - b);
  async function serve(core: GatewayCore): Promise<void> {
    const closing = standby?.close();
    standby = undefined;
    listening = await deps.listen(core);
    await closing;
  }
  async function stopMover(): Promise<void> {
    const stopping = mover;
    mover = undefined;
    if (!stopping) return;
    stopping.unserve?.();
    stoppedAt = performance.now();
    // The standby front takes the server in the same step as the routes let go of it.
    if (stopping.global) {
      standby = deps.serveStandby();
      await listening?.detach();
      listening = undefined;
    }
    await stopping.core.stop();
    // Its sends are over: the chats it sent to are free for their sessions' next owners at once,
    // before its partitions are released (the share's `beforeRelease` waits for this stop).
    await cluster.releaseLanes();
  }
  async function openMover(held: ReadonlySet<number>): Promise<void> {
    await stopMover();
    const started = performance.now();
    const list = [...held].sort((a, b) => a - b);
    const global = cluster.global() && !front;
    const routing = heldSet(list);
    if (list.length > 0 || global) {
      const core = await startedCore(deps, list, { global, routing });
      const unserve = servePeerMethods(deps.peer.handlers, {
        core,
        holds: holdsOf(deps, routing),
        nodeId: cluster.nodeId,
      });
      mover = { core, global, unserve };
      if (global) await serve(core);
    }
    const now = performance.now();
    const times = { ms: now - started, outageMs: now - (stoppedAt ?? started), change: "opened" as const };
    await logHolding(deps, list, mover?.core, times);
    stoppedAt = undefined;
  }
  /** This member became the global holder while its partition core runs: the global core opens beside it. */
  async function openFront(): Promise<void> {
    const started = performance.now();
    const core = await startedCore(deps, [], { global: true, routing: heldSet([]), beside: true });
    front = { core, global: true };
    await serve(core);
    await logHolding(deps, heldList(), mover?.core, { ms: performance.now() - started, outageMs: 0, change: "opened" });
  }
  async function move(held: ReadonlySet<number>): Promise<void> {
    const promoted = cluster.global() && !mover?.global && !front;
    if (promoted && mover?.core.holding) await openFront();
    if (!mover?.core.holding || (promoted && !front)) return openMover(held);
    const removed = [...mover.core.holding.held()].filter((part) => !held.has(part));
    if (removed.length > 0) await evict(removed);
    // Read again: an evict that left a partition core nothing stopped it.
    const holding = mover?.core.holding;
    if (!holding) return openMover(held);
    const added = [...held].filter((part) => !holding.held().has(part));
    if (added.length === 0) return;
    const started = performance.now();
    await holding.adopt(added);
    const ms = performance.now() - started;
    await logHolding(deps, heldList(), mover?.core, { ms, outageMs: 0, change: "adopted", moved: added });
  }
  async function evict(parts: readonly number[]): Promise<void> {
    const holding = mover?.core.holding;
    const left = [...(holding?.held() ?? [])].filter((part) => !parts.includes(part));
    // A partition core left with nothing stops (a core with no partitions runs only as the global
    // holder's); beside a global core it stays: its stop would release the process's account leases and lanes.
    if (!holding || (left.length === 0 && !mover?.global && !front)) return stopMover();
    const started = performance.now();
    const { cut } = await holding.evict(parts, DRAIN_MS);
    const ms = performance.now() - started;
    await logHolding(deps, left, mover?.core, { ms, outageMs: 0, change: "evicted", moved: parts, cut });
  }
  return {
    /** the core serving the gateway's clients (the global holder's), else the one holding its partitions */
    core: () => front?.core ?? mover?.core,
    /** Before `parts` are released: moved out of the running core (or the core stopped, when it cannot move them). */
    release: (parts: readonly number[]) => serial(() => evict(parts)),
    /** Moves the running core to `held` (adopting and evicting), or opens one for `held`; the global holder's core as the lease comes. */
    open: (held: ReadonlySet<number>) => serial(() => move(held)),
    /** Settles once every core open now is idle (`GatewayCore.idle`). */
    idle: async (): Promise<void> => {
      await Promise.all([mover?.core.idle(), front?.core.idle()]);
    },
    /** The partitions with work in the running core (a give-back prefers the others); none without a core. */
    busy: (): ReadonlySet<number> => mover?.core.holding?.busyParts() ?? new Set(),
    /** The gateway's stop: readiness fails, clients go, the cores stop, then the server closes. */
    close: () =>
      serial(async () => {
        const serving = front?.core ?? mover?.core;
        serving?.readiness.draining();
        await listening?.drain();
        // The partition core first: its replies still leave through the global core's accounts (WhatsApp's socket).
        await mover?.core.stop();
        await front?.core.stop();
        await listening?.close();
        await standby?.close();
      }),
  };
}

/** Whether a session's partition is one the core's routing holds now. */
function holdsOf(deps: CoreSlotDeps, routing: Routing): (sessionKey: string) => boolean {
  return (sessionKey) => routing.held().has(partOf(sessionKey, deps.database.partitions));
}

type Routing = ReturnType<typeof heldSet>;

/** What the global holder's core reads every session with: the member's unfenced database, which sessions it holds, the peer call. */
function partialImage(deps: CoreSlotDeps, routing: Routing): PartialImage {
  const database = deps.cluster.joined()?.database ?? deps.database;
  return { database, holds: holdsOf(deps, routing), call: localFirst(deps) };
}

/** The peer call, run on this process's own handler when it aims at this gateway (its partition core beside the global core). */
function localFirst(deps: CoreSlotDeps): PeerCall {
  return (target, name, params) => {
    const here = target.nodeId === deps.cluster.nodeId ? deps.peer.handlers.get(name) : undefined;
    return here ? here(params) : deps.peer.call(target, name, params);
  };
}

/** A core for `parts`, started; a failed start stops what it opened. */
async function startedCore(
  deps: CoreSlotDeps,
  parts: number[],
  role: { global: boolean; routing: Routing; beside?: boolean },
): Promise<GatewayCore> {
  const { options, cluster } = deps;
  const partitionsOnly = !role.global;
  const core = await createGatewayCore({
    ...options,
    ...deps.parts,
    ...(deps.metricsOf && { metrics: deps.metricsOf(role.beside ? "front" : "mover") }),
    cluster,
    database: cluster.fencedFor(!partitionsOnly),
    parts,
    routing: role.routing,
    partitionsOnly,
    peers: corePeers({ holder: () => cluster.owner(), self: () => cluster.global(), ...deps.peer }),
    // The session tools reach a session another gateway holds through its committed row (`sessions_send` into it).
    sessionElsewhere: (agentId, key) => storedEntry(deps.cluster.joined()?.database ?? deps.database, agentId, key),
    // The global holder serves the clients: it reads every partition's sessions in SQL (./partial-methods.ts).
    ...(!partitionsOnly && { partial: partialImage(deps, role.routing) }),
  });
  try {
    await core.start(inboundSink(core, options.logger));
  } catch (err) {
    await core.stop(0).catch(() => undefined);
    throw err;
  }
  return core;
}
