import { routeOf } from "../reply-target.js";
import type { RunRecord } from "../run-registry.js";
import type { TurnEnv } from "../runtime-deps.js";
import { sendNotice } from "../turn-notices.js";
import type { QueueItem } from "./queue-batch.js";

/** Why a waiting message was not run: over the cap, the oldest dropped or the newest refused. */
export type NotRunReason = "dropped" | "refused";

/** What the sender of a message that was not run is told (tests assert against this table). */
export const QUEUE_NOTICES = {
  dropped: (cap: number) =>
    `⚠️ This message was not answered: more than ${cap} messages were waiting here and it was the oldest (session.queue overflow "drop-oldest").`,
  refused: (cap: number) =>
    `⚠️ This message was not answered: ${cap} messages are already waiting here (session.queue cap). Send it again once the agent has caught up.`,
} as const;

/** Tells the sender their message was not run (its notice is in the outbox first), then settles it as aborted. */
export async function settleNotRun(env: TurnEnv, item: QueueItem, reason: NotRunReason, cap: number): Promise<void> {
  const { request } = item;
  const target = routeOf(request.message);
  const runId = request.runId!;
  if (target)
    await sendNotice(env.deliver, {
      sessionKey: request.parsed,
      target,
      text: QUEUE_NOTICES[reason](cap),
      idempotencyKey: `${runId}:not-run`,
    });
  const at = (env.now ?? Date.now)();
  const record: RunRecord = {
    runId,
    sessionKey: request.parsed.key,
    status: "aborted",
    queuedAt: at,
    endedAt: at,
    error: `not run: ${reason} (session.queue cap ${cap})`,
  };
  env.logger.info({ sessionKey: request.parsed.key, runId, reason, cap }, "a waiting message was not run");
  item.settle(record);
}
