// Inbox entries across partition owners (docs/scale-out.md "Inbound anywhere", `cluster.owners:
// "many"`, rule 5 of step 7): the sending side stores an entry for a session of a partition this
// gateway does not hold as a hand-off row of kind `inbox-entry` carrying that partition
// (migration 0013); the holder's drain takes it in through its own stored turns or pipeline, under
// the entry's dedupe key and run id, in the commit that deletes the row (./handoff-pass.ts).
import type pg from "pg";
import type { StartTurn } from "../agents/stored-turn.js";
import { type HandoffRow, PoisonHandoffError, inboxRowOf, storeHandoff } from "../cluster/handoff-sql.js";
import type { InboundOptions, InboundResult } from "../inbound/inbound-types.js";
import {
  type ForwardClaim,
  ForwardedContentSchema,
  type ForwardedEntry,
  type InboxForwarding,
} from "../inbound/inbox-forward.js";
import { INBOX_RETENTION_MS } from "../inbound/inbox-state.js";
import { partOf } from "../routing/partition.js";
import { trackedHandling } from "./chat-send-intake.js";

/** Where and as whom a gateway forwards, and which partitions it holds (read at each entry). */
export interface ForwardingDeps {
  pool: pg.Pool;
  schema: string;
  /** this gateway's node id (`received_by`) */
  nodeId: string;
  /** the schema's partition count */
  partitions: number;
  held(): ReadonlySet<number>;
  /** the clock the holder's inbox retention is read with; default Date.now */
  now?: () => number;
}

/** An inbox row as the holder stored it (its JSON value). */
type InboxValue = { status?: string; at?: number; runId?: string; sessionKey?: string } | undefined;

/** What the holder's inbox row says of a forwarded key: stored and not handled (a repeat), or handled. */
function fromInbox(row: InboxValue, entry: ForwardedEntry, sessionKey: string): ForwardClaim | undefined {
  if (!row) return undefined;
  if (row.status === "done")
    return {
      status: "done",
      ...(row.runId && { runId: row.runId }),
      ...(row.sessionKey && { sessionKey: row.sessionKey }),
    };
  return { status: "forwarded", runId: row.runId ?? entry.runId, sessionKey, repeat: true };
}

/** Stores `entry` for its partition's holder (one statement, NOTIFY with the part), or finds its key known. */
async function forward(deps: ForwardingDeps, entry: ForwardedEntry): Promise<ForwardClaim> {
  const sessionKey = entry.sessionKey ?? entry.session ?? "";
  const { dedupeKey, runId, ...content } = entry;
  const cutoff = (deps.now ?? Date.now)() - INBOX_RETENTION_MS;
  const row = { kind: "inbox-entry" as const, dedupeKey, runId, payload: content, receivedBy: deps.nodeId };
  const stored = await storeHandoff(
    deps.pool,
    deps.schema,
    { ...row, part: partOf(sessionKey, deps.partitions) },
    cutoff,
  );
  if (stored.status === "new") return { status: "forwarded", runId, sessionKey, repeat: false };
  if (stored.status === "duplicate" && stored.runId)
    return { status: "forwarded", runId: stored.runId, sessionKey, repeat: true };
  const known = stored.status === "taken" ? stored.inbox : await inboxRowOf(deps.pool, dedupeKey);
  const found = fromInbox(known as InboxValue, entry, sessionKey);
  if (found) return found;
  // Drained between the insert and the read, and no inbox row yet: the sender tries again.
  throw new Error(`the inbox entry ${dedupeKey} is being taken in by its partition's holder; send it again`);
}

/** The inbox's seam (src/inbound/inbox-forward.ts) on PostgreSQL: a session of a partition not in `held()` is forwarded. */
export function inboxForwarding(deps: ForwardingDeps): Required<InboxForwarding> {
  // One session's forwards commit in the order they were asked for: each waits for the one before (row ids follow commits).
  const last = new Map<string, Promise<unknown>>();
  return {
    holds: (sessionKey) => deps.held().has(partOf(sessionKey, deps.partitions)),
    forward(entry) {
      const key = entry.sessionKey ?? entry.session ?? "";
      const before = last.get(key) ?? Promise.resolve();
      const stored = before.then(
        () => forward(deps, entry),
        () => forward(deps, entry),
      );
      const settled = stored.catch(() => undefined);
      last.set(key, settled);
      void settled.then(() => last.get(key) === settled && last.delete(key));
      return stored;
    },
  };
}

/** What the holder takes a forwarded entry in with: its stored turns' `start` and its pipeline's `accept`. */
export interface EntryIntakes {
  start: StartTurn;
  accept: (message: unknown, options: InboundOptions) => Promise<{ result: Promise<InboundResult> }>;
}

/**
 * The holder's intake of an `inbox-entry` row: a stored turn through `start`, a message through
 * `accept` (routed again: the same config gives the same session), under the row's dedupe key (a
 * turn's; a message's is its platform id) and run id. It stores at once: both queue the inbox
 * entry before their first await. `handled`: the messages taken in so far reached their session's queue.
 */
export function inboxEntryIntake(intakes: EntryIntakes) {
  const tracked = trackedHandling();
  const intake = async (row: HandoffRow): Promise<void> => {
    const parsed = ForwardedContentSchema.safeParse(row.payload);
    if (!parsed.success || !row.runId)
      throw new PoisonHandoffError(`not an inbox entry: ${parsed.error?.issues[0]?.message ?? "no run id"}`);
    const { startedTurn, message, sessionKey, access, outcome } = parsed.data;
    if (startedTurn) return void (await intakes.start(startedTurn, { dedupeKey: row.dedupeKey, runId: row.runId }));
    if (!message) throw new PoisonHandoffError("an inbox entry with neither a message nor a turn");
    await tracked.accepted(
      intakes.accept(message, {
        ...(sessionKey !== undefined && { sessionKey }),
        runId: row.runId,
        // Decided by the gateway that received it (DM pairing's approvals live there): trusted here.
        ...(access && { access }),
        ...(outcome && { outcome }),
      }),
    );
  };
  return Object.assign(intake, { storesAtOnce: true, handled: tracked.handled });
}
