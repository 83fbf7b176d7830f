import { readFileSync } from "node:fs";

/** How many connections the gateway holds open, and how long it waits for `connect`. */
export interface ConnectionLimits {
  /** ms a new WebSocket has to authenticate with `connect` before it is closed (4401); default 5 000 */
  connectDeadlineMs: number;
  /** WebSockets not yet authenticated, per client address; default 16 */
  pendingPerClient: number;
  /** WebSockets not yet authenticated, in total; default 128 */
  pendingTotal: number;
  /** open HTTP and WebSocket connections; default: the descriptor limit minus a reserve for storage */
  maxConnections: number | undefined;
}

/** The defaults of {@link ConnectionLimits} (`maxConnections` comes from {@link connectionBudget}). */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  connectDeadlineMs: 5_000,
  pendingPerClient: 16,
  pendingTotal: 128,
  maxConnections: undefined,
};

/** The soft "Max open files" of this process (Linux); undefined where it cannot be read. */
export function openFileLimit(
  read: () => string = () => readFileSync("/proc/self/limits", "utf8"),
): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(read())?.[1];
    return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
  } catch {
    // Not Linux (or no /proc): no descriptor budget; the pending caps still hold.
    return undefined;
  }
}

/**
 * How many connections may be open at once so that journals, transcripts and platform requests
 * always find a descriptor: the limit minus a reserve of a quarter of it (at least 128).
 */
export function connectionBudget(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  return Math.max(8, limit - Math.max(128, Math.floor(limit / 4)));
}

/**
 * Transcript files each agent keeps open between appends: a sixteenth of the descriptor limit, at
 * least 256 (the transcripts' default, also when the limit is unknown), so a chat that writes again
 * finds its file open (1,000 busy chats past 256 handles reopened a file for nearly every line)
 * while the storage reserve of {@link connectionBudget} still holds them.
 */
export function transcriptHandleBudget(limit: number | undefined): number {
  return Math.max(256, Math.floor((limit ?? 0) / 16));
}

/**
 * Counts WebSockets that have not authenticated yet, per client and in total. `admit` answers
 * a release function (call it once authenticated or closed; more calls do nothing), or
 * undefined when a cap is reached and the socket must be refused.
 */
export function createPendingGate(limits: Pick<ConnectionLimits, "pendingPerClient" | "pendingTotal">) {
  const perClient = new Map<string, number>();
  let total = 0;
  return {
    admit(client: string): (() => void) | undefined {
      const mine = perClient.get(client) ?? 0;
      if (total >= limits.pendingTotal || mine >= limits.pendingPerClient) return undefined;
      perClient.set(client, mine + 1);
      total += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (perClient.get(client) ?? 1) - 1;
        if (left > 0) perClient.set(client, left);
        else perClient.delete(client);
      };
    },
  };
}
