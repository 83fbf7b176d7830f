import type { Slots } from "./slots.js";

/** The chat slot a running chat turn holds, and how many of its tool calls wait outside it. */
interface Holder {
  release: () => void;
  waits: number;
  signal: AbortSignal;
}

/** The chat slots running chat turns hold, by run id: taken before a turn, given back while it waits on another session. */
export function createSlotHolders(chatSlots: Slots) {
  const holders = new Map<string, Holder>();
  return {
    /** Takes a slot for a chat turn (rejects when `signal` aborts first); returns its release. */
    async take(runId: string, signal: AbortSignal): Promise<() => void> {
      const holder: Holder = { release: await chatSlots.acquire(signal), waits: 0, signal };
      holders.set(runId, holder);
      return () => {
        holders.delete(runId);
        holder.release();
      };
    },

    /**
     * Runs `wait` (run `runId`'s tool waiting for another session's turn, as `sessions_send` does)
     * with the run's chat slot given back meanwhile, and takes one again, ahead of turns that have
     * not started, before returning. So a chat turn never holds a slot while it waits for a turn
     * that is itself queued behind a chat turn waiting for a slot. Runs without a slot just wait.
     */
    async waitOutside<T>(runId: string, wait: () => Promise<T>): Promise<T> {
      const holder = holders.get(runId);
      if (!holder) return wait();
      // Tool calls of one step run in parallel: the slot is given back by the first and taken by the last.
      if (holder.waits++ === 0) holder.release();
      try {
        return await wait();
      } finally {
        if (--holder.waits === 0) holder.release = await chatSlots.acquire(holder.signal, { first: true });
      }
    },
  };
}
