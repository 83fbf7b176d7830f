import { type SendPolicyInput, resolveSendPolicy } from "../delivery/send-policy.js";
import type { TranscriptMessage } from "../sessions/transcripts/index.js";

/**
 * A turn's new messages as the transcript keeps them: when the send policy keeps the reply from
 * the chat it answers (`/send off`), its last assistant message is marked `withheld`, so every
 * view of the history (the control UI) can say it was not delivered. `policy` is undefined when
 * the turn delivers nowhere.
 */
export function markWithheld(messages: TranscriptMessage[], policy: SendPolicyInput | undefined): TranscriptMessage[] {
  if (!policy || resolveSendPolicy(policy).decision !== "deny") return messages;
  const last = messages.findLastIndex((message) => message.role === "assistant");
  return messages.map((message, index) => (index === last ? { ...message, withheld: true } : message));
}
