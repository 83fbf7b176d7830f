import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { SessionReset } from "../sessions/session-lifecycle.js";
import type { Provenance } from "../sessions/transcripts/index.js";

/** One turn to run on a session. */
export interface TurnRequest {
  /** the idempotency key; default a new UUID */
  runId?: string;
  parsed: ParsedSessionKey;
  agentId: string;
  /** a channel message: its metadata is recorded and it may carry a reset trigger */
  message?: InboundMessage;
  /** the text for the agent when there is no message (gateway `agent`, sessions_send) */
  prompt?: string;
  /** a new session first: an authorized `/new` or `/reset`, applied when the turn starts */
  reset?: SessionReset;
  /** where the reply goes; default the message's chat; false keeps it internal */
  deliver?: DeliveryContext | false;
  /** where the turn's input came from (another session, a channel), recorded in the transcript */
  provenance?: Provenance;
  extraSystemPrompt?: string;
  timeoutMs?: number;
  /** an owner (or a gateway client) triggered this turn; default false: its session tools reach only what it spawned */
  owner?: boolean;
  /** a replay after a restart: what the interrupted attempt wrote under this run id is not sent to the model again */
  resumed?: boolean;
  /** an isolated cron or hook run: a new sessionId for this turn, carrying what a new session keeps (docs/sessions.md) */
  isolated?: boolean;
  /** `provider/model` for this turn only (cron jobs, hooks); default the session's model */
  model?: string;
  /** awaited right before the turn runs (after its lane and slot): a replay counts its start on disk */
  onStart?: () => Promise<void>;
  /**
   * `session.queue.mode: "steer"`: called between model steps; resolves with the texts of messages
   * that arrived meanwhile (already tied to this run on disk), which the turn reads next and answers.
   */
  steer?: () => Promise<string[]>;
}

/** What a run's tools know about the run: its session, the chat it serves, its agent-to-agent trace. */
export interface ToolContext {
  agentId: string;
  sessionKey: ParsedSessionKey;
  runId: string;
  /** the chat this turn came from (where a spawned sub-agent announces) */
  origin?: DeliveryContext;
  trace?: { traceId: string; hop: number };
  /** whether an owner triggered the turn (its tools act with that authority); default false */
  owner?: boolean;
}

/**
 * A run's end for gateway clients: only its state (and what went wrong). The reply itself reaches
 * every chat, the gateway's clients included, as a delivery.
 */
export interface RuntimeEvent {
  type: "chat";
  sessionKey: string;
  runId: string;
  state: "final" | "error" | "aborted";
  error?: string;
}
