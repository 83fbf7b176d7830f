import type { PendingInbound } from "./inbox.js";
import type { Pipeline } from "./inbound-wiring.js";
import type { StoredEntry } from "./stored-turns.js";

/** True for an inbox entry that holds a turn a hook, a gateway client or a tool started (not a message). */
export const isStoredTurn = (entry: PendingInbound): entry is StoredEntry => entry.startedTurn !== undefined;

/** Replays a stored turn (hook, client, tool) a restart interrupted, unless its reply or announce is already out. */
export async function resumeStoredTurn(p: Pipeline, entry: StoredEntry): Promise<boolean> {
  const { handedOver, turns } = p.deps;
  if (handedOver?.(`${entry.runId}:reply`) || handedOver?.(`${entry.runId}:announce`) || !turns) {
    if (!turns) p.logger.error({ id: entry.id }, "a stored turn cannot be replayed here (no stored turns); dropped");
    await p.finish.dropped(entry);
    return false;
  }
  if (p.guard.exhausted(entry)) {
    await p.guard.setAside(entry, undefined);
    return false;
  }
  p.logger.info(
    { id: entry.id, runId: entry.runId, source: entry.startedTurn.source, receivedAt: entry.receivedAt },
    "replaying a stored turn a restart interrupted",
  );
  // Queued now (its lane taken before new traffic); it runs and is marked done in the background.
  void turns.replay(entry, () => p.guard.recordStart(entry));
  return true;
}

/** Runs a set-aside stored turn again (its starts counted afresh); it is queued at once. */
export async function retryStoredTurn(p: Pipeline, entry: StoredEntry) {
  if (!p.deps.turns) throw new Error("a stored turn cannot be retried here (no stored turns)");
  void p.deps.turns.replay(entry, () => p.guard.recordStart(entry));
  return { status: "queued" as const, sessionKey: entry.startedTurn.sessionKey, runId: entry.runId };
}
