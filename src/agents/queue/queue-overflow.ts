import type { TurnEnv } from "../runtime-deps.js";
import { type QueueItem, type SessionState, canJoin } from "./queue-batch.js";
import { settleNotRun } from "./queue-notices.js";
import type { QueueSettings } from "./queue-settings.js";

/** Messages waiting (not shortened), oldest first; sealed replays are not counted. */
function waiting(state: SessionState): Array<{ item: QueueItem; list: QueueItem[] }> {
  const lists = [...state.open.filter((b) => !b.sealed).map((b) => b.items), state.running?.steering ?? []];
  return lists
    .flatMap((list) => list.filter((item) => !item.short).map((item) => ({ item, list })))
    .sort((a, b) => a.item.seq - b.item.seq);
}

/** Beyond the cap: refuse the new message, drop the oldest, or shorten the oldest to a line. */
export function overflow(env: TurnEnv, state: SessionState, item: QueueItem, settings: QueueSettings): void {
  for (let over = waiting(state); over.length > settings.cap; over = waiting(state)) {
    const victim = settings.overflow === "refuse" ? over.find((w) => w.item === item)! : over[0]!;
    if (settings.overflow === "summarize") {
      victim.item.short = true;
      foldShortened(state, victim.list);
      continue;
    }
    victim.list.splice(victim.list.indexOf(victim.item), 1);
    void settleNotRun(env, victim.item, settings.overflow === "refuse" ? "refused" : "dropped", settings.cap);
    closeEmpty(state);
    if (victim.item === item) return;
  }
}

/** An open batch left with only shortened messages hands them to the next one from the same chat. */
function foldShortened(state: SessionState, list: QueueItem[]): void {
  const batch = state.open.find((b) => b.items === list);
  if (!batch || list.some((i) => !i.short)) return;
  const next = state.open.find((b) => b !== batch && canJoin(b, list[0]!));
  if (!next) return;
  next.items.unshift(...list.splice(0));
  closeEmpty(state);
}

/** Open batches left empty are ended before they run (their lane task finds nothing to do). */
function closeEmpty(state: SessionState): void {
  for (const batch of state.open.filter((b) => b.items.length === 0)) {
    batch.state = "ended";
    state.open.splice(state.open.indexOf(batch), 1);
  }
}
