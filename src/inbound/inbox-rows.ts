import { z } from "zod";
import { type StoredTurn, StoredTurnSchema } from "../agents/stored-turn.js";
import { type AnsweredOutcome, AnsweredOutcomeSchema } from "../commands/command-context.js";
import { type AccessDecision, AccessDecisionSchema } from "./access.js";

/** A message that is stored but whose turn has not committed yet: run again after a restart. */
const PendingRowSchema = z.object({
  status: z.literal("pending"),
  /** arrival order; replayed oldest first */
  seq: z.number().int().min(0),
  /** the run id of its turn, fixed at arrival so a replay reuses the reply's idempotency key */
  runId: z.string().min(1),
  receivedAt: z.number(),
  /** the message as the adapter handed it over (without `raw`); validated again when replayed; absent for a turn */
  message: z.record(z.string(), z.unknown()).optional(),
  /** a turn a hook, a gateway client or a tool started (instead of a message): its source's runner replays it */
  startedTurn: StoredTurnSchema.optional(),
  /** the session a gateway client chose (or a stored turn runs in), when one was chosen */
  sessionKey: z.string().optional(),
  /**
   * The session the routing table gave a platform message as it arrived (routing reads only the
   * config and the message), so the row knows its session and partition; a replay routes it again.
   */
  session: z.string().optional(),
  /** a native command answered through the platform's interaction, which a restart ends: never replayed */
  interactive: z.literal(true).optional(),
  /**
   * How many process lives began handling it: 1 when stored, one more each time a replayed turn
   * starts. Rows of earlier versions lack it and count as 1.
   */
  starts: z.number().int().min(0).optional(),
  /**
   * The run of a collected or steered turn this message was tied to before that turn read it
   * (`session.queue`): a replay runs it with the other messages tied to the same run, as one turn.
   */
  turn: z.string().min(1).optional(),
  /**
   * The access decision the receiving gateway made (`cluster.owners: "many"`: the global holder,
   * before it forwarded the message here); trusted as is, also by a replay. Absent: decided here.
   */
  access: AccessDecisionSchema.optional(),
  /** the outcome of a command the receiving gateway ran (`/pair`: the pairing rows are its), answered here as it is */
  outcome: AnsweredOutcomeSchema.optional(),
});

/** A message whose turn did not finish in {@link MAX_STARTS} starts: kept, never replayed, until an owner acts. */
const SetAsideRowSchema = PendingRowSchema.omit({ status: true, interactive: true }).extend({
  status: z.literal("set-aside"),
  /** why it was set aside */
  reason: z.string(),
  /** when it was set aside */
  at: z.number(),
  /** the session it was routed to, for `/status` */
  session: z.string().optional(),
});

/**
 * A handled message, kept only as a dedupe key until the retention window ends; a stored turn's
 * also keeps its run id and session, so a repeat of its key is answered with the first run.
 */
const DoneRowSchema = z.object({
  status: z.literal("done"),
  at: z.number(),
  runId: z.string().optional(),
  sessionKey: z.string().optional(),
  /**
   * The session the message was handled in, when it knew one: the row stays in that session's
   * partition (its owner writes and prunes it, fenced by that partition). Rows of earlier versions
   * lack it: rows of no session, the global holder's.
   */
  session: z.string().optional(),
});

/** One row of the inbox table. */
export const InboxRowSchema = z.discriminatedUnion("status", [PendingRowSchema, DoneRowSchema, SetAsideRowSchema]);
/** A pending row. */
export type PendingRow = z.infer<typeof PendingRowSchema>;
/** A set-aside row. */
export type SetAsideRow = z.infer<typeof SetAsideRowSchema>;
/** A done row. */
export type DoneRow = z.infer<typeof DoneRowSchema>;
/** Any row. */
export type InboxRow = z.infer<typeof InboxRowSchema>;

/** The session a row knows it belongs to (chosen by a client, a stored turn's, or routed as it arrived), if any. */
export function sessionOfRow(row: InboxRow): string | undefined {
  if (row.status === "done") return row.sessionKey ?? row.session;
  return sessionOfEntry(row);
}

/** The session a pending or set-aside entry (or its row) belongs to, as {@link sessionOfRow} reads it. */
export function sessionOfEntry(entry: Pick<PendingRow, "sessionKey" | "startedTurn" | "session">): string | undefined {
  return entry.sessionKey ?? entry.startedTurn?.sessionKey ?? entry.session;
}

/** A message set aside after this many starts that did not finish it (issue #26: a crash loop ends). */
export const MAX_STARTS = 3;

/** A stored message waiting for its turn to commit. */
export interface PendingInbound {
  id: string;
  seq: number;
  runId: string;
  receivedAt: number;
  /** the platform message; for a stored turn, how it reads as one (its source as channel and sender, its text) */
  message: Record<string, unknown>;
  /** a turn a hook, a gateway client or a tool started */
  startedTurn?: StoredTurn;
  sessionKey?: string;
  /** the session the message was routed to as it arrived (see {@link PendingRowSchema}) */
  session?: string;
  /** a native command with an interaction: kept for dedupe, never replayed (the interaction died with the process) */
  interactive?: true;
  /** the platform's dedupe key, when the message had an id */
  dedupeKey?: string;
  /** process lives that began handling it (see {@link PendingRowSchema}) */
  starts: number;
  /** the run of the collected or steered turn it was tied to (see {@link PendingRowSchema}) */
  turn?: string;
  /** the receiving gateway's access decision (see {@link PendingRowSchema}) */
  access?: AccessDecision;
  /** the outcome of the command the receiving gateway ran (see {@link PendingRowSchema}) */
  outcome?: AnsweredOutcome;
}

/** A message set aside: what `switchboard inbox list`, `/status` and `doctor` show. */
export interface SetAsideInbound extends Omit<PendingInbound, "interactive"> {
  reason: string;
  setAsideAt: number;
  /** the session it was routed to */
  session?: string;
}

const LOCAL_PREFIX = "local:";

/** Ids of messages without a platform message id (no dedupe key). */
export const localId = (uuid: string) => `${LOCAL_PREFIX}${uuid}`;
/** True for an id that is not a platform dedupe key. */
export const isLocalId = (id: string) => id.startsWith(LOCAL_PREFIX);

/** Where a stored turn came from, in the words of a message: its source is the channel and the sender. */
const asMessage = (turn: StoredTurn) => ({
  channel: turn.source,
  chat: { id: turn.sessionKey },
  sender: { id: turn.source },
  text: turn.text,
});

/** The entry a pending or set-aside row describes. */
export function entryOf(id: string, row: PendingRow | SetAsideRow): PendingInbound {
  return {
    id,
    seq: row.seq,
    runId: row.runId,
    receivedAt: row.receivedAt,
    message: row.startedTurn ? asMessage(row.startedTurn) : (row.message ?? {}),
    ...(row.startedTurn && { startedTurn: row.startedTurn }),
    starts: row.starts ?? 1,
    ...(row.sessionKey !== undefined && { sessionKey: row.sessionKey }),
    ...(row.session !== undefined && { session: row.session }),
    ...(row.turn !== undefined && { turn: row.turn }),
    ...(row.access && { access: row.access }),
    ...(row.outcome && { outcome: row.outcome }),
    ...(row.status === "pending" && row.interactive && { interactive: true as const }),
    ...(!isLocalId(id) && { dedupeKey: id }),
  };
}

/** The set-aside entry a set-aside row describes. */
export function setAsideOf(id: string, row: SetAsideRow): SetAsideInbound {
  return {
    ...entryOf(id, row),
    reason: row.reason,
    setAsideAt: row.at,
    ...(row.session !== undefined && { session: row.session }),
  };
}

/** A set-aside entry as `inbox.list`, `switchboard inbox list` and `doctor` show it. */
export function describeSetAside(entry: SetAsideInbound) {
  const message = entry.message as {
    channel?: unknown;
    chat?: { id?: unknown };
    sender?: { id?: unknown };
    text?: unknown;
  };
  return {
    id: entry.id,
    runId: entry.runId,
    receivedAt: entry.receivedAt,
    setAsideAt: entry.setAsideAt,
    starts: entry.starts,
    reason: entry.reason,
    ...(entry.session !== undefined && { sessionKey: entry.session }),
    channel: String(message.channel ?? "?"),
    chatId: String(message.chat?.id ?? "?"),
    senderId: String(message.sender?.id ?? "?"),
    text: typeof message.text === "string" ? message.text : "",
  };
}

/** What {@link describeSetAside} returns. */
export type SetAsideView = ReturnType<typeof describeSetAside>;
