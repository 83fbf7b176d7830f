// A sub-agent's spawn as a stored turn (docs/scale-out.md "The way there", step 5): `sessions_spawn`
// stores it in the CHILD's inbox under `spawn:<callId>` before it answers, and its runner (the
// child session's owner) writes the child's entry and record and runs the child; a restart before
// the child started replays it, so the child runs once.
import { randomUUID } from "node:crypto";
import type { RunRecord } from "../agents/run-registry.js";
import {
  LeftForReplay,
  type StoredTurn,
  type TurnRun,
  type TurnRunner,
  storedTurnRequest,
} from "../agents/stored-turn.js";
import { z } from "zod";
import { parseSessionKey } from "../routing/parse-session-key.js";
import { DeliveryContextSchema } from "../sessions/session-entry.js";
import type { ToolDeps } from "./tool-deps.js";

/** The dedupe key of the spawn a `sessions_spawn` call stores: a replayed call spawns once. */
export const spawnDedupeKey = (callId: string): string => `spawn:${callId}`;

/** What a stored spawn keeps besides its task (the turn's text): what the child's entry, record and run need. */
const SpawnTurnInputSchema = z.object({
  /** the agent the child runs under */
  agentId: z.string(),
  requesterKey: z.string(),
  /** where the announce goes (the requester's chat) */
  origin: DeliveryContextSchema,
  cleanup: z.enum(["keep", "delete"]),
  label: z.string().optional(),
  model: z.object({ provider: z.string(), model: z.string() }).optional(),
  timeoutMs: z.number().int().positive().optional(),
  callId: z.string().optional(),
  extraSystemPrompt: z.string(),
});
/** A stored spawn's input. */
export type SpawnTurnInput = z.infer<typeof SpawnTurnInputSchema>;

/** The child's session entry, unless a run of this spawn before a restart wrote it already. */
async function createChildEntry(deps: ToolDeps, turn: StoredTurn, input: SpawnTurnInput): Promise<void> {
  const { label, model } = input;
  const at = deps.now();
  const { store } = await deps.sessions.forAgent(input.agentId);
  await store.patch(turn.sessionKey, (current) =>
    current
      ? undefined
      : {
          sessionId: randomUUID(),
          createdAt: at,
          updatedAt: at,
          spawnedBy: input.requesterKey,
          channel: "internal",
          ...(label && { label }),
          ...(model && { providerOverride: model.provider, modelOverride: model.model }),
        },
  );
}

/** Writes the child's entry and its record (queued: its run not started); `ended` settles once it ran and was announced. */
async function prepareChild(
  deps: ToolDeps,
  turn: StoredTurn,
  input: SpawnTurnInput,
  run: { runId: string; done: Promise<RunRecord> },
) {
  const { runId, done } = run;
  await createChildEntry(deps, turn, input);
  return deps.subagents.register(
    {
      runId,
      ...(input.callId && { callId: input.callId }),
      childSessionKey: turn.sessionKey,
      childAgentId: input.agentId,
      requesterKey: input.requesterKey,
      origin: input.origin,
      task: turn.text,
      cleanup: input.cleanup,
      ...(input.label && { label: input.label }),
      queued: true,
    },
    done,
  );
}

/** Queues the child's run; it starts only once `ready` settled (its entry and record written), and marks its record started. */
function queueChild(
  deps: ToolDeps,
  spawn: { turn: StoredTurn; input: SpawnTurnInput },
  run: TurnRun,
  ready: Promise<unknown>,
) {
  const { turn, input } = spawn;
  const child = { parsed: parseSessionKey(turn.sessionKey)!, agentId: input.agentId };
  const extra = {
    deliver: false as const,
    ...(input.timeoutMs !== undefined && { timeoutMs: input.timeoutMs }),
    extraSystemPrompt: input.extraSystemPrompt,
  };
  return deps.runtime.enqueue({
    ...storedTurnRequest(turn, run, child, extra),
    onStart: async () => {
      await ready;
      await run.onStart?.();
      await deps.subagents.started(run.runId);
    },
  });
}

/**
 * Runs a stored spawn in the child's session, first or replayed: the child's run is queued at once
 * (known by its run id), its entry and record written, and the turn settles once the child ended
 * and its announce was handed to the requester. A spawn whose child had started before a restart
 * is not run again: the registry's recovery announces it as interrupted, as before; nor one whose
 * stop was asked (the recovery records it stopped).
 */
export function spawnTurnRunner(deps: ToolDeps): TurnRunner {
  return {
    async run(turn, run) {
      const input = SpawnTurnInputSchema.parse(turn.input);
      const record = deps.subagents.get(run.runId);
      // Started before a restart (the recovery announces it), or stopped: not run (again).
      if (record && (!record.queued || record.stopAskedAt !== undefined)) return;
      // The run's end, known once the run is queued (below); the record waits for it.
      let queued: (done: Promise<RunRecord>) => void = () => undefined;
      const done = new Promise<RunRecord>((resolve) => (queued = resolve));
      const prepared = prepareChild(deps, turn, input, { runId: run.runId, done });
      const ready = prepared.then(() => undefined);
      ready.catch(() => undefined); // awaited by the run's start; a failure fails that start
      deps.subagents.preparing(run.runId, prepared);
      queued(queueChild(deps, { turn, input }, run, ready).done);
      // Not written (the database away): the child's run fails at its start, and the spawn is left
      // pending, not done, so the next start replays it (the tool answered with the failure).
      const { ended } = await prepared.catch((err: unknown) => {
        throw new LeftForReplay(err, "the sub-agent's session entry or record could not be stored");
      });
      await ended;
    },
  };
}
