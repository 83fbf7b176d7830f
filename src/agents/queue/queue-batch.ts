import type { RunRecord } from "../run-registry.js";
import type { TurnRequest } from "../turn-request.js";

/** One stored channel message waiting in its session's queue for the turn that answers it. */
export interface QueueItem {
  /** its inbox entry (tied to the turn that consumes it before that turn starts) */
  entryId: string;
  /** the turn the message alone would be: its run id is the entry's, `message` is set */
  request: TurnRequest;
  /** arrival order across the gateway: the oldest waiting message is the first to overflow */
  seq: number;
  /** over the cap with `overflow: "summarize"`: the turn sees one shortened line of it */
  short?: true;
  /** settles its `done`: the record of the turn that answered it, or one saying it was not run */
  settle: (record: RunRecord) => void;
}

/** One turn of a session's queue: the messages it answers, and while it runs those waiting to steer it. */
export interface Batch {
  /** the run id of the turn: its first message's */
  runId: string;
  key: string;
  items: QueueItem[];
  /** when the last message joined (collect waits `debounceMs` past it) */
  lastAt: number;
  state: "open" | "running" | "ended";
  /** a replay of a turn whose messages were tied to it before a crash: nothing else joins */
  sealed: boolean;
  /** its messages are tied to its run in the inbox (a lone message needs no tie until it steers one in) */
  tied: boolean;
  /** steer mode: messages for the running turn's next model step */
  steering: QueueItem[];
}

/** A session's queue: its turns not started yet (in lane order) and the one running. */
export interface SessionState {
  open: Batch[];
  running?: Batch;
}

/** Items join a batch only when the turn stays one conversation: same chat, same authority, no reset. */
export function canJoin(batch: Batch, item: QueueItem): boolean {
  const lead = batch.items[0]?.request;
  const next = item.request;
  if (!lead || batch.state !== "open" || batch.sealed || lead.reset || next.reset) return false;
  return (lead.owner ?? false) === (next.owner ?? false) && sameChat(lead, next);
}

/** True when both messages came from one chat (their replies go to the same place). */
export function sameChat(a: TurnRequest, b: TurnRequest): boolean {
  const x = a.message;
  const y = b.message;
  return (
    !!x &&
    !!y &&
    x.channel === y.channel &&
    x.accountId === y.accountId &&
    x.chat.id === y.chat.id &&
    x.chat.threadId === y.chat.threadId
  );
}

/** The shortened line of a message over the cap. */
const shortLine = (item: QueueItem) => {
  const text = (item.request.message?.text ?? "").replace(/\s+/g, " ").trim();
  return `"${text.length > 100 ? `${text.slice(0, 100)}…` : text}"`;
};

/** At most this many shortened lines are shown; the rest are counted. */
const MAX_SHORT_LINES = 20;

/** What the model reads for several messages: the shortened ones in one line, then each in full, oldest first. */
export function promptOf(items: readonly QueueItem[]): string {
  const short = items.filter((item) => item.short);
  const full = items.filter((item) => !item.short).map((item) => item.request.message?.text ?? "");
  if (short.length === 0) return full.join("\n\n");
  const lines = short.slice(0, MAX_SHORT_LINES).map(shortLine);
  const more = short.length > MAX_SHORT_LINES ? ` and ${short.length - MAX_SHORT_LINES} more` : "";
  const head = `[${short.length} earlier message${short.length === 1 ? "" : "s"} shortened while you were busy: ${lines.join("; ")}${more}]`;
  return [head, ...full].join("\n\n");
}

/**
 * The request of a batch's turn: the first message's request under its run id, the last message
 * (where the reply goes and what it quotes) and, for more than one, every message in the prompt.
 */
export function batchRequest(batch: Batch): TurnRequest {
  const lead = batch.items[0]!.request;
  const last = batch.items.at(-1)!.request;
  const single = batch.items.length === 1 && !batch.items[0]!.short;
  return {
    ...lead,
    runId: batch.runId,
    ...(last.message && { message: last.message }),
    ...(!single && { prompt: promptOf(batch.items) }),
  };
}
