// Hook turns across gateways (docs/scale-out.md "Inbound anywhere"): a standby stores a checked
// hook turn in the hand-off inbox instead of relaying it, and answers with the run id it promised;
// the owner takes each row in through the same `startTurn` its own hooks use, under the row's
// dedupe key and that run id.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { type StartOptions, type StartTurn, StoredTurnSchema, type TurnStart } from "../agents/stored-turn.js";
import { type HandoffRow, PoisonHandoffError, inboxRowOf, storeHandoff } from "../cluster/handoff-sql.js";
import { InboxWriteError } from "../inbound/inbox.js";
import { INBOX_RETENTION_MS } from "../inbound/inbox-state.js";

/** Where a standby stores what it hands off: its schema's pool, undefined until it joined its cluster. */
export interface HandoffTarget {
  joined(): { pool: pg.Pool; schema: string } | undefined;
  /** this gateway's node id (`received_by`) */
  nodeId: string;
  newId?: () => string;
  /** the clock the owner's inbox retention is read with; default Date.now */
  now?: () => number;
}

/** The dedupe key of a hook without an idempotency key: its run id, so a row drained twice still runs once. */
const keylessKey = (runId: string) => `hook-run:${runId}`;

/** An inbox row as {@link knownTurn} reads it. */
type InboxValue = { status: string; at?: number; runId?: string; sessionKey?: string } | undefined;

/** The first run an owner's inbox row names (undefined: none, or a key handled before `cutoff`, forgotten as the owner's own claim forgets it). */
function knownTurn(row: InboxValue, fallbackKey: string, cutoff: number): TurnStart | undefined {
  if (!row?.runId) return undefined;
  if (row.status === "done" && row.at !== undefined && row.at < cutoff) return undefined;
  const status = row.status === "pending" ? "pending" : "done";
  return { status, runId: row.runId, sessionKey: row.sessionKey ?? fallbackKey };
}

/** What the owner's inbox says of `dedupeKey` (its state row), when it knows it: the first run. */
async function ownerKnows(pool: pg.Pool, dedupeKey: string, fallbackKey: string, cutoff: number) {
  return knownTurn((await inboxRowOf(pool, dedupeKey)) as InboxValue, fallbackKey, cutoff);
}

/**
 * Stores the turn for the owner (or finds its key known); rejects with what the caller maps to 503.
 * The owner's inbox is read after the INSERT, in its statement (src/cluster/handoff-sql.ts), so a
 * repeat racing the owner's intake of the first copy is still answered `duplicate`.
 */
async function handOff(
  target: HandoffTarget,
  { pool, schema }: { pool: pg.Pool; schema: string },
  turn: Parameters<StartTurn>[0],
  options: StartOptions,
) {
  const cutoff = (target.now ?? Date.now)() - INBOX_RETENTION_MS;
  const runId = options.runId ?? (target.newId ?? randomUUID)();
  const key = options.dedupeKey ?? keylessKey(runId);
  const row = { kind: "hook" as const, dedupeKey: key, runId, payload: turn, receivedBy: target.nodeId };
  const stored = await storeHandoff(pool, schema, row, options.dedupeKey === undefined ? undefined : cutoff);
  if (stored.status === "taken") {
    const known = knownTurn(stored.inbox as InboxValue, turn.sessionKey, cutoff);
    if (known) return known;
  }
  if (stored.status === "new") return { status: "new" as const, runId, sessionKey: turn.sessionKey };
  if (stored.status === "duplicate") {
    const first = StoredTurnSchema.safeParse(stored.payload);
    const sessionKey = first.success ? first.data.sessionKey : turn.sessionKey;
    if (stored.runId) return { status: "pending" as const, runId: stored.runId, sessionKey };
  }
  // Drained between the insert and the read: the owner's inbox has it by now.
  const known = await ownerKnows(pool, key, turn.sessionKey, cutoff);
  if (known) return known;
  throw new Error(`the hook's idempotency key ${key} is being taken in by the owner; send it again`);
}

/**
 * A standby's `startTurn`: a repeat of a key the owner knows answers its first run; otherwise the
 * turn is stored in the hand-off inbox under the run id its key derives (a keyless one: a new id;
 * one transaction, NOTIFY included) and answered `new`. Anything failing (the database away) is an `InboxWriteError`: a 503, nothing stored.
 */
export function handOffHookTurns(target: HandoffTarget): StartTurn {
  return async (turn, options = {}) => {
    const joined = target.joined();
    if (!joined) throw new InboxWriteError(new Error("this gateway has not joined its cluster yet"));
    try {
      return await handOff(target, joined, turn, options);
    } catch (err) {
      throw err instanceof InboxWriteError ? err : new InboxWriteError(err);
    }
  };
}

/**
 * The owner's intake of a handed-off hook turn: the same `startTurn`, under the row's dedupe key and
 * promised run id. It stores at once: `startTurn` queues the inbox entry before its first await.
 */
export function hookHandoffIntake(startTurn: StartTurn) {
  const intake = async (row: HandoffRow): Promise<void> => {
    const parsed = StoredTurnSchema.safeParse(row.payload);
    if (!parsed.success || parsed.data.source !== "hook")
      throw new PoisonHandoffError(`not a hook turn: ${parsed.error?.issues[0]?.message ?? "source is not hook"}`);
    await startTurn(parsed.data, { dedupeKey: row.dedupeKey, runId: row.runId });
  };
  return Object.assign(intake, { storesAtOnce: true });
}
