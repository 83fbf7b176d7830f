import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type InboundMessage, InboundMessageSchema } from "../routing/inbound-message.js";
import type { PendingInbound } from "./inbox.js";
import { sessionOfEntry } from "./inbox-rows.js";
import { commandReplyKey } from "./inbound-act.js";
import { handleStored } from "./inbound-handle.js";
import type { InboundResult } from "./inbound-types.js";
import type { Pipeline } from "./inbound-wiring.js";
import { isStoredTurn, resumeStoredTurn, retryStoredTurn } from "./resume-stored-turn.js";

/** True when a stored entry a restart interrupted must not run again: already answered, or a native command. */
function notReplayed(p: Pipeline, entry: PendingInbound, message: InboundMessage): boolean {
  const { handedOver } = p.deps;
  const answered = [`${entry.turn ?? entry.runId}:reply`, `${entry.runId}:not-run`, commandReplyKey(entry)];
  if (answered.some((key) => handedOver?.(key))) return true;
  if (!entry.interactive) return false;
  // Its answer could only go through the interaction, which ended with the old process.
  p.logger.warn(
    { id: entry.id, command: message.command?.name },
    "a native command a restart interrupted is not replayed; its sender may run it again",
  );
  return true;
}

/** The entry as a turn of its own, without the run it was tied to. */
function untied(entry: PendingInbound): PendingInbound {
  const { turn: _turn, ...alone } = entry;
  return alone;
}

/** A stored entry with its message, or undefined (dropped, logged) when the message is unreadable. */
async function readable(p: Pipeline, entry: PendingInbound) {
  const parsed = InboundMessageSchema.safeParse(entry.message);
  if (parsed.success) return { entry, message: parsed.data };
  p.logger.error({ id: entry.id, err: parsed.error }, "stored inbound message is unreadable; dropped");
  await p.finish.dropped(entry);
  return undefined;
}

/**
 * Replays one interrupted turn, or finishes it without one; true when it was replayed. `group` is
 * every entry tied to the same collected or steered turn, in arrival order: replayed as that one
 * turn, under its run id, and finished with it.
 */
async function resumeOne(p: Pipeline, group: PendingInbound[]): Promise<boolean> {
  const [first] = group;
  if (first && group.length === 1 && isStoredTurn(first)) return resumeStoredTurn(p, first);
  const members = (await Promise.all(group.map((entry) => readable(p, entry)))).filter((m) => m !== undefined);
  const [lead, ...followers] = members;
  if (!lead) return false;
  if (notReplayed(p, lead.entry, lead.message)) {
    for (const m of members) await p.finish.dropped(m.entry);
    return false;
  }
  if (p.guard.exhausted(lead.entry)) {
    for (const m of members) await p.guard.setAside(m.entry, m.message);
    return false;
  }
  p.logger.info(
    { id: lead.entry.id, runId: lead.entry.turn ?? lead.entry.runId, messages: members.length },
    "replaying an inbound message a restart interrupted",
  );
  const result = await handleStored(p, lead.entry, lead.message, true, undefined, followers).catch(() => undefined); // logged in handleStored
  if (result?.status === "queued")
    void result.done.then(() => Promise.all(followers.map((f) => p.finish.dropped(f.entry))));
  // The lead did not run: each follower is replayed on its own, untied, so no two turns share a run id.
  else for (const f of followers) await handleStored(p, untied(f.entry), f.message, true).catch(() => undefined);
  return true;
}

/** Which sessions' entries a resume replays: true for a session of the partitions just adopted. */
export type SessionFilter = (sessionKey: string) => boolean;

/** True when a group has an entry of a session `only` takes (no filter: every group). */
function taken(group: PendingInbound[], only: SessionFilter | undefined): boolean {
  if (!only) return true;
  return group.some((entry) => {
    const session = sessionOfEntry(entry);
    return session !== undefined && only(session);
  });
}

/**
 * Replays the messages a restart interrupted, oldest first, before new traffic: a turn whose
 * reply already reached the outbox is only marked done; any other is run again (same run id).
 * Messages tied to one collected or steered turn are replayed together, as that turn. With
 * `only` (partitions adopted while the core runs), just the groups of the sessions it takes.
 */
export async function resumePending(p: Pipeline, only?: SessionFilter): Promise<number> {
  let replayed = 0;
  const pending = p.deps.inbox.pending();
  const grouped = new Set<string>();
  for (const entry of pending) {
    if (grouped.has(entry.id)) continue;
    const group = entry.turn ? pending.filter((e) => e.turn === entry.turn) : [entry];
    for (const e of group) grouped.add(e.id);
    if (taken(group, only) && (await resumeOne(p, group))) replayed++;
  }
  return replayed;
}

/** What retrying a set-aside entry started: a message's result, or a stored turn queued again. */
type RetryResult = InboundResult | Awaited<ReturnType<typeof retryStoredTurn>>;

/** Runs a set-aside message again (its starts counted afresh); undefined when no such entry is set aside. */
export async function retrySetAside(p: Pipeline, id: string): Promise<RetryResult | undefined> {
  const entry = await p.deps.inbox.retry(id);
  if (!entry) return undefined;
  if (isStoredTurn(entry)) return retryStoredTurn(p, entry);
  const parsed = InboundMessageSchema.safeParse(entry.message);
  if (!parsed.success) {
    await p.finish.dropped(entry);
    throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `inbox entry ${id} is unreadable; it was dropped`);
  }
  return handleStored(p, entry, parsed.data, true);
}
