// Inbox entries for a session whose partition another gateway holds (docs/scale-out.md "Inbound
// anywhere", `cluster.owners: "many"`): the inbox does not store them (its port refuses rows of
// other partitions); it forwards them, already routed, to the partition's holder through the
// hand-off inbox (src/gateway/inbox-forwarding.ts), under the same dedupe key and run id.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { StoredTurnSchema } from "../agents/stored-turn.js";
import { type AnsweredOutcome, AnsweredOutcomeSchema } from "../commands/command-context.js";
import { type AccessDecision, AccessDecisionSchema } from "./access.js";
import { localId } from "./inbox-rows.js";
import { InboxWriteError } from "./inbox-write-error.js";

/** What a forwarded entry carries besides its dedupe key and run id (the payload of an `inbox-entry` hand-off row). */
export const ForwardedContentSchema = z.object({
  /** the session a client chose or a stored turn runs in */
  sessionKey: z.string().min(1).optional(),
  /** the session the routing table gave a platform message */
  session: z.string().min(1).optional(),
  /** the platform message (without `raw`) */
  message: z.record(z.string(), z.unknown()).optional(),
  /** the stored turn (a hook, a client, a tool, an announce, an abort ...) */
  startedTurn: StoredTurnSchema.optional(),
  /** the access decision the receiving gateway made for the message (DM pairing's approvals live there); the holder trusts it */
  access: AccessDecisionSchema.optional(),
  /** the outcome of a command the receiving gateway ran (`/pair`); the holder answers it as it is */
  outcome: AnsweredOutcomeSchema.optional(),
});

/** An inbox entry for another gateway: its content, the dedupe key its holder's inbox takes it under and its run id. */
export type ForwardedEntry = z.infer<typeof ForwardedContentSchema> & { dedupeKey: string; runId: string };

/**
 * What forwarding found: stored for the holder (`repeat`: the key was stored already, and `runId`
 * is the first copy's), or known to the holder's inbox as handled (its first run, for a stored turn).
 */
export type ForwardClaim =
  | { status: "forwarded"; runId: string; sessionKey: string; repeat: boolean }
  | { status: "done"; runId?: string; sessionKey?: string };

/** The inbox's forwarding seam; without it the inbox holds every session (one owner, local files). */
export interface InboxForwarding {
  /** whether this gateway holds the partition of `sessionKey` */
  holds?: (sessionKey: string) => boolean;
  /** stores `entry` for the partition's holder; settles once committed */
  forward?: (entry: ForwardedEntry) => Promise<ForwardClaim>;
}

/** How the inbox was asked to store an entry. */
interface Asked {
  content: { message: Record<string, unknown> } | { startedTurn: z.infer<typeof StoredTurnSchema> };
  sessionKey?: string | undefined;
  session?: string | undefined;
  runId?: string | undefined;
  access?: AccessDecision | undefined;
  outcome?: AnsweredOutcome | undefined;
}

/**
 * Forwards an entry whose session's partition this gateway does not hold (undefined: it holds it,
 * or the entry names no session yet: stored here). Rejects with an `InboxWriteError` when the
 * forward could not be stored, like a local store: the sender must not be told it arrived.
 */
export function forwardIfAway(
  seam: InboxForwarding,
  dedupeKey: string | undefined,
  asked: Asked,
): Promise<ForwardClaim> | undefined {
  const sessionKey = asked.sessionKey ?? asked.session;
  if (!seam.forward || !seam.holds || sessionKey === undefined || seam.holds(sessionKey)) return undefined;
  const entry: ForwardedEntry = {
    ...asked.content,
    dedupeKey: dedupeKey ?? localId(randomUUID()),
    runId: asked.runId ?? randomUUID(),
    ...(asked.sessionKey !== undefined && { sessionKey: asked.sessionKey }),
    ...(asked.session !== undefined && { session: asked.session }),
    ...(asked.access && { access: asked.access }),
    ...(asked.outcome && { outcome: asked.outcome }),
  };
  return seam.forward(entry).catch((err: unknown) => {
    throw err instanceof InboxWriteError ? err : new InboxWriteError(err);
  });
}
