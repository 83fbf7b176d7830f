import type { Batch, QueueItem } from "./queue-batch.js";
import { promptOf, sameChat } from "./queue-batch.js";

/** Ties inbox entries to the run that answers them, durably, before that run reads them. */
export type BindEntries = (entryIds: string[], runId: string) => Promise<void>;

/** Ties `items` to the batch's run on disk; from then on the batch counts as tied. */
export async function tie(batch: Batch, items: QueueItem[], bind: BindEntries): Promise<void> {
  await bind(
    items.map((i) => i.entryId),
    batch.runId,
  );
  batch.tied = true;
}

/** The messages waiting to steer the running turn, tied to its run before the model reads them. */
export async function takeSteering(batch: Batch, bind: BindEntries): Promise<string[]> {
  const taken = batch.steering.splice(0);
  if (taken.length === 0) return [];
  batch.items.push(...taken);
  // The turn's first message too, when it ran alone so far: a replay finds every message of the run.
  await tie(batch, batch.tied ? taken : batch.items, bind);
  return [promptOf(taken)];
}

/** `/stop`: the messages waiting to steer the running turn go with it (settled as aborted); returns how many. */
export function dropSteering(running: Batch | undefined, key: string, at: number): number {
  const dropped = running?.steering.splice(0) ?? [];
  for (const item of dropped)
    item.settle({ runId: item.request.runId!, sessionKey: key, status: "aborted", queuedAt: at, endedAt: at });
  return dropped.length;
}

/** A message may steer a running turn when it is one conversation with it (same chat, same authority, no reset). */
export function canSteer(running: Batch, item: QueueItem): boolean {
  const lead = running.items[0]!.request;
  return !item.request.reset && (lead.owner ?? false) === (item.request.owner ?? false) && sameChat(lead, item.request);
}
