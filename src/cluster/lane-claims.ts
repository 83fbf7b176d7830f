// The sender's side of the lane claims (docs/scale-out.md "Sends claimed per chat lane"): which
// lanes this gateway holds and since when, so a chunk to a lane held and young costs no round
// trip; claims asked for while a statement is out go together in the next one. Only the claim's
// time is kept: the row's `fence` is a takeover counter (how often the lane changed hands), read
// by nothing here.
import type { LaneClaim } from "./lane-claim-sql.js";

/** The share of `leaseTtlMs` a claim stays good for sends (as the send guard's): the rest covers clock drift and the send's own time. */
const SAFE_SHARE = 0.8;

/** What {@link createLaneClaims} reads and does. */
export interface LaneClaimsOptions {
  /** one claim statement for `lanes`, fenced by the partitions of `sessionKeys`; resolves with the lanes now held */
  claim(lanes: readonly string[], sessionKeys: readonly string[]): Promise<LaneClaim[]>;
  leaseTtlMs: number;
  /** monotonic ms; default performance.now */
  clock?: () => number;
  /** started (not awaited) after a claim statement, at most once every `pruneEveryMs`: deletes old lane rows */
  prune?: (() => void) | undefined;
  /** default one hour */
  pruneEveryMs?: number;
}

/** Claims asked for together: lane -> the sessions sending to it, and how their statement went. */
interface Batch {
  lanes: Map<string, Set<string>>;
  done: Promise<Set<string>>;
  settle(result: { held: Set<string> } | { err: unknown }): void;
}

function newBatch(): Batch {
  let settle!: Batch["settle"];
  const done = new Promise<Set<string>>((resolve, reject) => {
    settle = (result) => ("held" in result ? resolve(result.held) : reject(result.err));
  });
  done.catch(() => undefined); // each asker awaits it and sees the error
  return { lanes: new Map(), done, settle };
}

/**
 * Resolves true when this gateway may send the next chunk to `lane` (for `sessionKey`): its claim
 * is young, or a claim now took or renewed it and is young still. False when another live gateway
 * holds the lane, or the claim statement took so long that its claim is no longer young.
 * Rejects with the statement's error (a stale fence: FencedOutError, the gateway stops).
 */
export function createLaneClaims(options: LaneClaimsOptions): (lane: string, sessionKey: string) => Promise<boolean> {
  const clock = options.clock ?? (() => performance.now());
  // lane -> the monotonic time its claim statement went out
  const held = new Map<string, number>();
  const young = (lane: string) => {
    const at = held.get(lane);
    return at !== undefined && clock() - at < options.leaseTtlMs * SAFE_SHARE;
  };
  let prunedAt = clock();
  // Claims no longer young are forgotten, so the map holds only the lanes sent to lately; the
  // rows long past their `until` go at most once every `pruneEveryMs` (the first time one
  // `pruneEveryMs` after the start).
  const prune = () => {
    for (const lane of held.keys()) if (!young(lane)) held.delete(lane);
    if (!options.prune || clock() - prunedAt < (options.pruneEveryMs ?? 3_600_000)) return;
    prunedAt = clock();
    options.prune();
  };
  let next: Batch | undefined;
  let running = false;
  async function send(batch: Batch) {
    const lanes = [...batch.lanes.keys()];
    const sessions = [...new Set([...batch.lanes.values()].flatMap((keys) => [...keys]))];
    // Read before the statement goes: the claim runs `leaseTtlMs` from a moment no earlier than this.
    const sentAt = clock();
    try {
      const claims = await options.claim(lanes, sessions);
      for (const lane of lanes) held.delete(lane);
      for (const claim of claims) held.set(claim.lane, sentAt);
      prune();
      batch.settle({ held: new Set(claims.map((claim) => claim.lane)) });
    } catch (err) {
      for (const lane of lanes) held.delete(lane);
      batch.settle({ err });
    }
  }
  async function drain() {
    while (next) {
      const batch = next;
      next = undefined;
      await send(batch);
    }
    running = false;
  }
  return async (lane, sessionKey) => {
    if (young(lane)) return true;
    next ??= newBatch();
    const batch = next;
    const keys = batch.lanes.get(lane) ?? new Set<string>();
    batch.lanes.set(lane, keys.add(sessionKey));
    if (!running) {
      running = true;
      // Asked in the same tick: one statement for them all.
      queueMicrotask(() => void drain());
    }
    // Held, and still young: a statement that took most of the TTL (an outage waited out) claimed a
    // lane that may run out before the send, so it answers false and the item waits.
    return (await batch.done).has(lane) && young(lane);
  };
}
