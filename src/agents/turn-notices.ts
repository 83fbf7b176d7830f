import type { Deliver } from "../delivery/delivery-request.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { DeliveryContext, SessionEntry } from "../sessions/session-entry.js";
import { toolCallSummary } from "./tool-call-summary.js";

/** One notice of a run to its chat (compaction, a tool call, a failure). */
export interface TurnNotice {
  sessionKey: ParsedSessionKey;
  entry?: SessionEntry;
  target: DeliveryContext;
  text: string;
  idempotencyKey: string;
}

/** Delivers a notice like any message; a failed one is recorded by the delivery gate and the run goes on. */
export function sendNotice(deliver: Deliver, notice: TurnNotice): Promise<void> {
  return deliver({ ...notice, kind: "notice" }).then(
    () => undefined,
    () => undefined,
  );
}

/** `/verbose on`: one notice per tool call to the chat, as the run goes; none for internal runs. */
export function verboseSink(
  deliver: Deliver,
  sessionKey: ParsedSessionKey,
  runId: string,
  target: DeliveryContext | undefined,
): ((call: { name: string; input: unknown }) => void) | undefined {
  if (!target) return undefined;
  let calls = 0;
  return (call) =>
    void sendNotice(deliver, {
      sessionKey,
      target,
      text: toolCallSummary(call.name, call.input),
      idempotencyKey: `${runId}:tool:${++calls}`,
    });
}
