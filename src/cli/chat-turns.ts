import { failureKey, isPieceOf, replyKey } from "../agents/run-delivery-keys.js";
import { type CliIo, out } from "./cli-io.js";

/** A `chat` event: a run's end (its state only), or a chat command and its reply from any client of the session. */
export interface ChatEvent {
  sessionKey: string;
  runId: string;
  state: "final" | "error" | "aborted" | "command" | "announce";
  text?: string;
  error?: string;
  /** a chat command (role user) or its reply (role assistant), from any client of the session */
  command?: true;
  role?: "user" | "assistant";
}

/** How a run ended, as `agent.wait` answers it. */
export interface AskedEnd {
  status: string;
  text?: string;
  error?: string;
}

/** What the terminal knows of its runs: how each ended (events can arrive before the send's result), who waits, what it printed. */
export interface ChatTurns {
  ended: Map<string, ChatEvent>;
  waiting: Map<string, (event: ChatEvent) => void>;
  /** commands this terminal sent: their replies come back as the send's result */
  sentCommands: Set<string>;
  /** the ids of the deliveries printed (a restarted gateway may send one again; its id is stable) */
  shown: Set<string>;
  /** deliveries printed from `agent.wait` instead (after a reconnect): their pieces are not printed again */
  told: Set<string>;
}

/** A terminal's empty record of its runs. */
export const newChatTurns = (): ChatTurns => ({
  ended: new Map(),
  waiting: new Map(),
  sentCommands: new Set(),
  shown: new Set(),
  told: new Set(),
});

const printedPieceOf = (turns: ChatTurns, key: string) => [...turns.shown].some((id) => isPieceOf(id, key));

/** Prints a delivery of the session once: a repeat of a piece, or one already told from `agent.wait`, is skipped. */
export function showDelivery(io: CliIo, turns: ChatTurns, delivered: { text: string; messageId: string }) {
  if (turns.shown.has(delivered.messageId)) return;
  if ([...turns.told].some((key) => isPieceOf(delivered.messageId, key))) return;
  turns.shown.add(delivered.messageId);
  out(io, `agent: ${delivered.text}`);
}

/**
 * A run's end as `agent.wait` told it, when its event may have passed during a reconnect: its reply,
 * or what went wrong, printed once: not when its delivery was printed already, and its delivery is
 * not printed when it comes later.
 */
export function showAskedEnd(io: CliIo, turns: ChatTurns, runId: string, end: AskedEnd): void {
  if (end.status === "aborted") {
    out(io, "[run aborted]");
    return;
  }
  const key = end.status === "ok" ? replyKey(runId) : failureKey(runId);
  turns.told.add(key);
  if (printedPieceOf(turns, key)) return;
  if (end.status !== "ok") out(io, `[run ${end.status}${end.error ? `: ${end.error}` : ""}]`);
  else if (end.text) out(io, `agent: ${end.text}`);
}

/** A run the restarted gateway does not know (yet): said once, unless its reply or failure was printed. */
export function showUnknownRun(io: CliIo, turns: ChatTurns, runId: string): void {
  if (printedPieceOf(turns, replyKey(runId)) || printedPieceOf(turns, failureKey(runId))) return;
  out(io, "[the gateway restarted during this turn; if it replays the message, its reply follows]");
}
