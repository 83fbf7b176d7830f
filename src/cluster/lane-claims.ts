// The sender's side of the lane claims (docs/scale-out.md "Sends claimed per chat lane"): which
// lanes this gateway holds and since when, so a chunk to a lane held and young costs no round
// trip; claims asked for while a statement is out go together in the next one. Only the claim's
// time is kept: the row's `fence` is a takeover counter (how often the lane changed hands), read
// by nothing here. With `release` (many mode), a lane whose queue emptied here is released, lanes
// emptied together in one statement, and a core's stop releases every claim it holds.
import type { LaneClaim } from "./lane-claim-sql.js";

/** The share of `leaseTtlMs` a claim stays good for sends (as the send guard's): the rest covers clock drift and the send's own time. */
const SAFE_SHARE = 0.8;

/** What {@link createLaneClaims} reads and does. */
export interface LaneClaimsOptions {
  /** one claim statement for `lanes`, fenced by the partitions of `sessionKeys`; resolves with the lanes now held */
  claim(lanes: readonly string[], sessionKeys: readonly string[]): Promise<LaneClaim[]>;
  /**
   * one statement ending this gateway's claims on `lanes` ("all": every one it holds) now, so another
   * gateway takes them at once; never rejects (a failure leaves them to run out). None: nothing is released.
   */
  release?: ((lanes: readonly string[] | "all") => Promise<void>) | undefined;
  leaseTtlMs: number;
  /** monotonic ms; default performance.now */
  clock?: () => number;
  /** started (not awaited) after a claim statement, at most once every `pruneEveryMs`: deletes old lane rows */
  prune?: (() => void) | undefined;
  /** default one hour */
  pruneEveryMs?: number;
}

/** A gateway's lane claims: ask before each chunk; release what it no longer sends to. */
export interface LaneClaims {
  /**
   * Resolves true when this gateway may send the next chunk to `lane` (for `sessionKey`): its claim
   * is young, or a claim now took or renewed it and is young still. False when another live gateway
   * holds the lane, or the claim statement took so long that its claim is no longer young.
   * Rejects with the statement's error (a stale fence: FencedOutError, the gateway stops).
   */
  (lane: string, sessionKey: string): Promise<boolean>;
  /**
   * The lane's queue emptied here (no send in flight on it, nothing queued): forgotten at once and
   * released in the next statement, with the lanes emptied while one is out. Asked for again
   * before that statement went out, it is not released; a claim asked after it waits for it.
   */
  release(lane: string): void;
  /** The core stopped (no send of it in flight): every claim forgotten and released in one statement. */
  releaseAll(): Promise<void>;
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

/** The claims this gateway holds (lane -> the monotonic time its claim statement went out), and which are young. */
function heldLanes(options: LaneClaimsOptions, clock: () => number) {
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
  return { held, young, prune };
}

/**
 * The gateway's lane claims (see {@link LaneClaims}). Claim and release statements go out one at
 * a time, in the order asked, so a claim asked after a release reaches the row after it.
 */
export function createLaneClaims(options: LaneClaimsOptions): LaneClaims {
  const clock = options.clock ?? (() => performance.now());
  const { held, young, prune } = heldLanes(options, clock);
  let next: Batch | undefined;
  let out: Batch | undefined;
  // Lanes to release in the next statement; a releaseAll asked bumps `epoch`: a claim that went out before it keeps nothing.
  const releasing = new Set<string>();
  const all: Array<() => void> = [];
  let epoch = 0;
  async function send(batch: Batch) {
    const lanes = [...batch.lanes.keys()];
    const sessions = [...new Set([...batch.lanes.values()].flatMap((keys) => [...keys]))];
    // Read before the statement goes: the claim runs `leaseTtlMs` from a moment no earlier than this.
    const sentAt = clock();
    const asked = epoch;
    try {
      const claims = await options.claim(lanes, sessions);
      for (const lane of lanes) held.delete(lane);
      if (asked === epoch) for (const claim of claims) held.set(claim.lane, sentAt);
      prune();
      batch.settle({ held: new Set(claims.map((claim) => claim.lane)) });
    } catch (err) {
      for (const lane of lanes) held.delete(lane);
      batch.settle({ err });
    }
  }
  let running = false;
  async function drain() {
    while (all.length > 0 || releasing.size > 0 || next) {
      if (all.length > 0) {
        const asked = all.splice(0);
        await options.release?.("all");
        for (const done of asked) done();
      }
      if (releasing.size > 0) {
        const lanes = [...releasing];
        releasing.clear();
        await options.release?.(lanes);
      }
      if (!next) continue;
      out = next;
      next = undefined;
      await send(out);
      out = undefined;
    }
    running = false;
  }
  const kick = () => {
    if (running) return;
    running = true;
    // Asked in the same tick: one statement for them all.
    queueMicrotask(() => void drain());
  };
  const holds = async (lane: string, sessionKey: string) => {
    releasing.delete(lane);
    if (young(lane)) return true;
    next ??= newBatch();
    const batch = next;
    const keys = batch.lanes.get(lane) ?? new Set<string>();
    batch.lanes.set(lane, keys.add(sessionKey));
    kick();
    // Held, and still young: a statement that took most of the TTL (an outage waited out) claimed a
    // lane that may run out before the send, so it answers false and the item waits.
    return (await batch.done).has(lane) && young(lane);
  };
  return Object.assign(holds, {
    release(lane: string) {
      // Not held (nothing to release), or a claim of it asked or out: a send is on its way; the lane stays.
      if (!options.release || !held.has(lane) || next?.lanes.has(lane) || out?.lanes.has(lane)) return;
      held.delete(lane);
      releasing.add(lane);
      kick();
    },
    async releaseAll() {
      held.clear();
      releasing.clear();
      epoch += 1;
      if (!options.release) return;
      // After the statement out now (if any), before any claim asked later.
      const done = new Promise<void>((resolve) => all.push(resolve));
      kick();
      await done;
    },
  });
}
