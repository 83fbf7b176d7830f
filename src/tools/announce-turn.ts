// A sub-agent's announce as a stored turn (docs/scale-out.md "The way there", step 5): the child's
// side stores it in the REQUESTER's inbox under `announce:<runId>` (a second hand-over of one run
// stores nothing), and its runner, the requester's owner, keeps it in the requester's history and
// delivers it; a restart before it ran replays it.
import { z } from "zod";
import type { StartTurn, StoredTurn, TurnRunner } from "../agents/stored-turn.js";
import { storedRunId } from "../agents/uuid-v5.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { DeliveryContextSchema } from "../sessions/session-entry.js";
import { recordAnnounce } from "./announce-record.js";
import type { AnnounceHandOver } from "./subagent-record.js";

/** What a stored announce keeps besides its text: its id, the agent whose transcript keeps it, where it goes. */
const AnnounceTurnInputSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  target: DeliveryContextSchema,
});

/** Stores `announce` in its requester's inbox under its id, with a run id every gateway derives alike from schema `scope`. */
export async function storeAnnounce(
  turns: { start: StartTurn },
  scope: string,
  announce: AnnounceHandOver,
): Promise<void> {
  const turn: StoredTurn = {
    source: "announce",
    sessionKey: announce.requesterKey,
    text: announce.text,
    owner: false,
    provenance: { kind: "system" },
    input: { id: announce.id, agentId: announce.agentId, target: announce.target },
  };
  await turns.start(turn, { dedupeKey: announce.id, runId: storedRunId("announce", scope, announce.id) });
}

/** What running a stored announce needs. */
export interface AnnounceTurnDeps {
  sessions: AgentSessionsPool;
  logger: Logger;
  deliver: Deliver;
  /** told after the announce was kept in the requester's transcript (the gateway tells that session's clients to look again) */
  onAnnounce: (announce: { sessionKey: string; id: string }) => void;
}

/**
 * Runs a stored announce in its requester's session, first or replayed: kept in the requester's
 * transcript (once by its id), then handed to the outbox (once by its idempotency key), so a replay
 * after a crash between the two does neither twice.
 */
export function announceTurnRunner(deps: AnnounceTurnDeps): TurnRunner {
  return {
    async run(turn) {
      const { id, agentId, target } = AnnounceTurnInputSchema.parse(turn.input);
      const requester = parseSessionKey(turn.sessionKey)!;
      if (await recordAnnounce(deps, requester, agentId, { id, text: turn.text }))
        deps.onAnnounce({ sessionKey: requester.key, id });
      await deps.deliver({ sessionKey: requester, target, text: turn.text, kind: "announce", idempotencyKey: id });
    },
  };
}
