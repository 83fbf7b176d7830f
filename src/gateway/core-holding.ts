// Partitions adopted and evicted one by one by a running core (`cluster.owners: "many"`,
// docs/scale-out.md "Partitions adopted and evicted one by one", step 8): a change of the member's
// share moves those partitions' sessions into or out of the core and touches no other session.
// Two sets say what the core holds: the state port's (which rows it loads and may write:
// `state.parted`) and the routing's (what the forward, the hand-off drain and the peer methods
// take as this core's: `routing`). An adopt grows the state's first and the routing's once the
// adopted entries are queued; an evict shrinks the routing's first (new inbound waits for the next
// holder in the hand-off inbox), lets those sessions' turns end, and shrinks the state's last.
import type { Lanes } from "../agents/lanes.js";
import type { DeliveryGate } from "../delivery/delivery-gate.js";
import type { Outbox } from "../delivery/outbox.js";
import type { Inbox } from "../inbound/inbox.js";
import { sessionOfEntry } from "../inbound/inbox-rows.js";
import type { Logger } from "../logger.js";
import { partOf } from "../routing/partition.js";
import type { heldSet } from "../state/parted-image.js";
import type { PartedState } from "../state/state-port.js";
import type { SubagentRegistry } from "../tools/subagent-registry.js";
import type { HandoffDrain } from "./handoff-drain.js";

/** What a core moves partitions with. */
export interface HoldingParts {
  logger: Logger;
  /** the state port's partitions: rows loaded and written */
  parted: PartedState;
  /** the routing's partitions: forwarded, drained and served as this core's */
  routing: ReturnType<typeof heldSet>;
  /** the schema's partition count */
  partitions: number;
  lanes: Lanes;
  inbox: Inbox;
  outbox: Outbox;
  gate: DeliveryGate;
  pipeline: { resume(only?: (sessionKey: string) => boolean): Promise<number> };
  subagents: SubagentRegistry;
  handoff?: HandoffDrain | undefined;
  /** aborts a session's running turn (a cut one, once its partition's writes are refused) */
  runtime: { abortSession(sessionKey: string): unknown };
}

/** Whether a session (undefined: none known) is of `parts`. */
function inParts(parts: ReadonlySet<number>, count: number) {
  return (sessionKey: string | undefined): boolean => sessionKey !== undefined && parts.has(partOf(sessionKey, count));
}

/** The sessions with a turn running or queued, or an entry pending; with `replies`, also a reply not sent. */
function sessionsAtWork(h: Pick<HoldingParts, "lanes" | "inbox" | "outbox">, replies: boolean) {
  return [
    ...h.lanes.stats().map((lane) => lane.key),
    ...h.inbox.pending().map(sessionOfEntry),
    ...(replies ? h.outbox.pending().map((item) => item.sessionKey) : []),
  ];
}

/** The partitions with work in this core now: a turn running or queued, an entry pending, a reply not sent. */
function busyParts(h: Pick<HoldingParts, "lanes" | "inbox" | "outbox" | "partitions">): Set<number> {
  const sessions = sessionsAtWork(h, true).filter((key) => key !== undefined);
  return new Set(sessions.map((key) => partOf(key, h.partitions)));
}

/** Whether `parts` still have work: a turn of one of their sessions running or queued, or an entry pending. */
const working = (h: HoldingParts, only: (sessionKey: string | undefined) => boolean): boolean =>
  sessionsAtWork(h, false).some(only);

/** Waits until `parts` have no work, or `ms` passed (then their turns are cut: the next holder replays them). */
async function drainParts(h: HoldingParts, only: (sessionKey: string | undefined) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (working(h, only) && Date.now() < deadline) {
    const lanesIdle = h.lanes.idle();
    let timer: NodeJS.Timeout | undefined;
    // A lane of another session may keep `idle` pending: look again at least every 50 ms.
    const tick = new Promise((resolve) => (timer = setTimeout(resolve, Math.min(50, deadline - Date.now()))));
    await Promise.race([lanesIdle, tick]);
    clearTimeout(timer);
  }
  return !working(h, only);
}

/**
 * Moves partitions into and out of the running core. `adopt` and `evict` are run one at a time by
 * the core's slot (./many-cores.ts).
 */
function coreHolding(h: HoldingParts) {
  return {
    /** the partitions the routing holds now */
    held: h.routing.held,
    busyParts: () => busyParts(h),
    /** Loads `parts`' rows, replays their pending entries, sends their pending replies, recovers their sub-agents, then drains their hand-off rows. */
    async adopt(parts: readonly number[]): Promise<void> {
      const fresh = parts.filter((part) => !h.routing.held().has(part));
      if (fresh.length === 0) return;
      const only = inParts(new Set(fresh), h.partitions);
      await h.parted.adopt(fresh);
      const replayed = await h.pipeline.resume(only);
      if (replayed > 0) h.logger.info({ replayed }, "replayed the inbound messages of adopted partitions");
      h.routing.add(fresh);
      h.gate.pump();
      h.subagents.recoverAdopted(only);
      await h.handoff?.drain();
    },
    /**
     * Stops taking `parts`' inbound (it waits in the hand-off inbox for their next holder), lets their
     * turns end within `drainMs` (a turn still running then is cut: the next holder replays it), stops
     * sending their replies (the next holder sends what is left) and takes their rows out of the image.
     */
    async evict(parts: readonly number[], drainMs: number): Promise<{ cut: boolean }> {
      const only = inParts(new Set(parts), h.partitions);
      h.routing.remove(parts);
      // A pass in flight may still take a row of theirs in: the next pass reads the smaller set.
      await h.handoff?.drain();
      const drained = await drainParts(h, only, drainMs);
      // A cut turn was not what failed: its start is not counted against the message (as at a stop).
      if (!drained) await h.inbox.forgiveInterruptedStarts(only);
      await h.gate.leave(only);
      await h.parted.evict(parts);
      // Their writes are refused now: an aborted turn ends writing and sending nothing; the next holder replays it.
      if (!drained) for (const lane of h.lanes.stats()) if (only(lane.key)) h.runtime.abortSession(lane.key);
      return { cut: !drained };
    },
  };
}

/** A core's partition moves. */
export type CoreHolding = ReturnType<typeof coreHolding>;

/** The moves of a core whose state port and routing hold some partitions; undefined for any other core. */
export function holdingOf(
  parts: Omit<HoldingParts, "parted" | "routing" | "partitions"> & {
    state: { parted?: PartedState | undefined };
    routing?: HoldingParts["routing"] | undefined;
    database?: { partitions: number } | undefined;
  },
): CoreHolding | undefined {
  const { parted } = parts.state;
  if (!parted || !parts.routing || !parts.database) return undefined;
  return coreHolding({ ...parts, parted, routing: parts.routing, partitions: parts.database.partitions });
}
