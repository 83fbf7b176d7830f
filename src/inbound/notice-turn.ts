// A notice to a session's chat that only the session's owner can send (docs/scale-out.md "DM pairing
// in many mode"): with `cluster.owners: "many"` the global holder makes DM pairing's decisions, but an
// outbox item and its send lane belong to the partition of the session the notice is filed under.
// So the notice is a stored turn of source `notice` in that session's inbox: forwarded to its
// holder like any stored turn, where its runner hands it to the delivery gate (same idempotency key).
import { z } from "zod";
import type { StartTurn, StoredTurn, TurnRunner } from "../agents/stored-turn.js";
import { storedRunId } from "../agents/uuid-v5.js";
import type { Deliver, DeliveryRequest } from "../delivery/delivery-request.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { DeliveryContextSchema } from "../sessions/session-entry.js";

/** What a stored notice keeps besides its text: where it goes and the key the gate files it under. */
const NoticeInputSchema = z.object({ target: DeliveryContextSchema, idempotencyKey: z.string().min(1) });

/** The stored turn that carries `request` (a notice that bypasses sendPolicy) to its session's owner. */
function noticeTurn(request: DeliveryRequest): StoredTurn {
  return {
    source: "notice",
    sessionKey: request.sessionKey.key,
    text: request.text,
    owner: false,
    provenance: { kind: "system" },
    input: { target: request.target, idempotencyKey: request.idempotencyKey },
  };
}

/** Runs a stored notice on the session's owner, first or replayed: hands it to the gate (a repeat of its key sends nothing). */
export function noticeTurnRunner(deps: { deliver: Deliver; parseKey: (raw: string) => ParsedSessionKey }): TurnRunner {
  return {
    async run(turn) {
      const { target, idempotencyKey } = NoticeInputSchema.parse(turn.input);
      await deps.deliver({
        sessionKey: deps.parseKey(turn.sessionKey),
        target,
        text: turn.text,
        kind: "notice",
        idempotencyKey,
        bypassPolicy: true,
      });
    },
  };
}

/** What {@link deliverThroughHolder} needs: the gate, which sessions this core holds, its stored turns, the schema. */
export interface NoticeRouting {
  deliver: Deliver;
  holds: (sessionKey: string) => boolean;
  start: StartTurn;
  /** the PostgreSQL schema: the notice's run id is derived from it and its key, alike on every gateway */
  scope: string;
}

/**
 * A `deliver` for notices: through the gate here when this core holds the session, else stored as a
 * `notice` turn under the request's idempotency key, which the inbox forwards to the session's
 * holder (answered `queued`: the holder sends it, and a repeat of the key stores nothing).
 */
export function deliverThroughHolder(routing: NoticeRouting): Deliver {
  return async (request) => {
    if (routing.holds(request.sessionKey.key)) return routing.deliver(request);
    const dedupeKey = request.idempotencyKey;
    await routing.start(noticeTurn(request), { dedupeKey, runId: storedRunId("notice", routing.scope, dedupeKey) });
    return { status: "queued", messageIds: [] };
  };
}
