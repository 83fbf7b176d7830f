// The core of a gateway with `cluster.owners: "many"` (docs/scale-out.md "N owners"): opened for the
// partitions its share holds, and opened again when they change (the running one is stopped first:
// its turns drain, what is left replays from the inbox at the next holder's open). A partition core
// runs its sessions' work only; the global holder's also runs its channel accounts, cron and sweeps,
// and serves the clients on the gateway's server. Between two cores of the global holder a standby
// front serves (503 with Retry-After: the writer lease's holder is this gateway): nothing half-open serves.
import type { Standby } from "./standby-server.js";
import { heldParts } from "../state/postgres/held-parts.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
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

/**
 * One info line per change: how many partitions, which, the sessions loaded, how long the open took
 * (`ms`) and how long no core ran (`outageMs`: from the stop of the one before, releases included).
 */
async function logHolding(
  deps: CoreSlotDeps,
  held: readonly number[],
  core: GatewayCore | undefined,
  times: { ms: number; outageMs: number },
) {
  const opened = core ? await core.sessions.all() : [];
  const sessions = opened.reduce((sum, agent) => sum + agent.store.size(), 0);
  const { shown } = heldParts(held, deps.database.partitions);
  const global = deps.cluster.global();
  deps.options.logger.info(
    {
      count: held.length,
      parts: held.length === 0 ? "none" : shown,
      sessions,
      global,
      ms: Math.round(times.ms),
      outageMs: Math.round(times.outageMs),
    },
    "holding partitions",
  );
}

/** The gateway's one core at a time; every open and stop runs after the one before it. */
export function coreSlot(deps: CoreSlotDeps) {
  const { cluster } = deps;
  let core: GatewayCore | undefined;
  let listening: GatewayServer | undefined;
  let standby: Standby | undefined = deps.standby;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };
  let stoppedAt: number | undefined;
  let unserve: (() => void) | undefined;
  async function stopCore(): Promise<void> {
    unserve?.();
    unserve = undefined;
    if (core) stoppedAt = performance.now();
    // The standby front takes the server in the same step as the routes let go of it.
    if (listening) standby = deps.serveStandby();
    await listening?.detach();
    listening = undefined;
    const stopping = core;
    core = undefined;
    await stopping?.stop();
    // Its sends are over: the chats it sent to are free for their sessions' next owners at once,
    // before its partitions are released (the share's `beforeRelease` waits for this stop).
    if (stopping) await cluster.releaseLanes();
  }
  async function openCore(held: ReadonlySet<number>): Promise<void> {
    await stopCore();
    const started = performance.now();
    const list = [...held].sort((a, b) => a - b);
    const global = cluster.global();
    if (list.length > 0 || global) core = await startedCore(deps, list, !global);
    if (core)
      unserve = servePeerMethods(deps.peer.handlers, { core, holds: holdsOf(deps, list), nodeId: cluster.nodeId });
    if (core && global) {
      const closing = standby?.close();
      standby = undefined;
      listening = await deps.listen(core);
      await closing;
    }
    const now = performance.now();
    await logHolding(deps, list, core, { ms: now - started, outageMs: now - (stoppedAt ?? started) });
    stoppedAt = undefined;
  }
  return {
    core: () => core,
    /** Stops the core (its partitions are about to be released). */
    stop: () => serial(stopCore),
    /** Stops the core and opens one for `held` (a partition core, or the global holder's). */
    open: (held: ReadonlySet<number>) => serial(() => openCore(held)),
    /** The gateway's stop: readiness fails, clients go, the core stops, then the server closes. */
    close: () =>
      serial(async () => {
        core?.readiness.draining();
        await listening?.drain();
        await core?.stop();
        await listening?.close();
        await standby?.close();
      }),
  };
}

/** Whether a session's partition is one of `parts`. */
function holdsOf(deps: CoreSlotDeps, parts: readonly number[]): (sessionKey: string) => boolean {
  const held = new Set(parts);
  return (sessionKey) => held.has(partOf(sessionKey, deps.database.partitions));
}

/** What the global holder's core reads every session with: the member's unfenced database, which sessions it holds, the peer call. */
function partialImage(deps: CoreSlotDeps, parts: readonly number[]): PartialImage {
  const database = deps.cluster.joined()?.database ?? deps.database;
  return { database, holds: holdsOf(deps, parts), call: deps.peer.call };
}

/** A core for `parts`, started; a failed start stops what it opened. */
async function startedCore(deps: CoreSlotDeps, parts: number[], partitionsOnly: boolean): Promise<GatewayCore> {
  const { options, cluster } = deps;
  const core = await createGatewayCore({
    ...options,
    ...deps.parts,
    cluster,
    database: cluster.fencedFor(!partitionsOnly),
    parts,
    partitionsOnly,
    peers: corePeers({ holder: () => cluster.owner(), ...deps.peer }),
    // The session tools reach a session another gateway holds through its committed row (`sessions_send` into it).
    sessionElsewhere: (agentId, key) => storedEntry(deps.cluster.joined()?.database ?? deps.database, agentId, key),
    // The global holder serves the clients: it reads every partition's sessions in SQL (./partial-methods.ts).
    ...(!partitionsOnly && { partial: partialImage(deps, parts) }),
  });
  try {
    await core.start(inboundSink(core, options.logger));
  } catch (err) {
    await core.stop(0).catch(() => undefined);
    throw err;
  }
  return core;
}
