import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import type { CommandDispatcher } from "../commands/command-dispatcher.js";
import type { Config } from "../config/schema/index.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { AnsweredOutcome } from "../commands/command-context.js";
import type { AccessDecision } from "./access.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { CommandChatEvent } from "./command-echo.js";
import type { Inbox } from "./inbox.js";
import type { Pairing } from "./pairing.js";
import type { StoredTurns } from "./stored-turns.js";

/** What became of one inbound message. */
export type InboundResult =
  /** `pending`: the same message is stored and not handled yet; it is answered once, by that entry */
  | { status: "duplicate"; dedupeKey: string; pending?: true }
  | { status: "ignored"; sessionKey: string; reason: string }
  | { status: "command"; sessionKey: string; reply?: string }
  | { status: "queued"; sessionKey: string; runId: string; done: Promise<RunRecord> }
  /** stored for the gateway holding its session's partition (src/inbound/inbox-forward.ts): its turn runs there */
  | { status: "forwarded"; sessionKey: string; runId: string }
  /** stored and not handled (`storeOnly`, a stopping core): the next start of its session's core replays it */
  | { status: "stored" };

/** Options for messages that do not come from a platform (gateway clients). */
export interface InboundOptions {
  /** skip routing: the session the client chose */
  sessionKey?: string;
  /** the run id (idempotency key) for the turn */
  runId?: string;
  /**
   * Where a native command (`message.command`) is answered, when the platform gave one: the
   * pipeline defers it at once and answers through it, not through the channel. Such a message is
   * stored for dedupe but never replayed after a restart, since the interaction ends with the process.
   */
  interaction?: CommandInteraction;
  /**
   * The access decision of the gateway that received the message, trusted as is: only the intake
   * of a forwarded inbox entry (src/gateway/inbox-forwarding.ts, `cluster.owners: "many"`) passes it.
   */
  access?: AccessDecision;
  /** with `access`: the outcome of the command the receiving gateway ran (`/pair`), answered here as it is */
  outcome?: AnsweredOutcome;
  /**
   * Store it and stop there: a stopping core's sink (its drain), so the platform may be told it
   * arrived. The entry stays pending and the next start of its session's core replays it, in order.
   */
  storeOnly?: boolean;
}

/** Dependencies of the inbound pipeline (`createInboundPipeline`). */
export interface InboundDeps {
  config: Config;
  sessions: AgentSessionsPool;
  runtime: AgentRuntime;
  inbox: Inbox;
  /** turns hooks, gateway clients and tools started: replayed here, in arrival order with the messages; default none */
  turns?: Pick<StoredTurns, "replay">;
  /** true when the outbox already holds this idempotency key (a replayed turn that had committed) */
  handedOver?: (idempotencyKey: string) => boolean;
  deliver: Deliver;
  commands?: CommandDispatcher;
  /** what each channel's adapter declared (gateway clients); default: every channel is a platform chat */
  capabilitiesOf?: CapabilitiesOf;
  /** DM pairing: who an owner let in, and a code for an unknown sender (`dmPolicy: "pairing"`); default: none */
  pairing?: Pick<Pairing, "paired" | "onStranger">;
  /** pushes a command and its reply to the session's clients as `chat` events; default: none */
  emit?: (event: "chat", payload: CommandChatEvent) => void;
  logger: Logger;
}
