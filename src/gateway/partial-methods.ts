// The gateway methods on a core holding only some partitions (`cluster.owners: "many"`, the
// global holder; docs/scale-out.md "Reads in many mode"): its image holds only its partitions'
// sessions, so the session lists, `sessions.resolve` and `chat.history` read the committed rows of
// every partition (./committed-reads.ts, as a standby does), `sessions.get` of another's session
// too, and a per-session write of a session another gateway owns is sent to that gateway by peer
// call (./write-forward.ts) instead of touching the partial image. `chat.send` is not forwarded
// here: its inbox entry is forwarded to the session's owner by the inbox.
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { COMMITTED_READS, committedCore, scopeOf, scopeOfKey, storedPendingRun } from "./committed-reads.js";
import type { GatewayCore } from "./gateway-core.js";
import type { PartialImage } from "./partial-image.js";
import { agentWait } from "./methods/agent-methods.js";
import type { GatewayMethod, MethodCaller } from "./methods/method.js";
import { labelTaken, sessionsPatch } from "./methods/session-methods.js";
import { sessionsGet } from "./methods/session-panel-methods.js";
import { isSessionWrite, ownerOf, writtenSession } from "./session-writes.js";
import { forwardWrite } from "./write-forward.js";

/** The refusal of `method` on session `key`, which another gateway's partition holds. */
async function notOwner(database: PostgresDatabase, method: string, key: string): Promise<SwitchboardError> {
  const { owner, part } = await ownerOf(database, key);
  const who = owner
    ? `is owned by gateway ${owner} (it holds partition ${part})`
    : `is in partition ${part}, which no gateway holds right now`;
  return new SwitchboardError(
    ErrorCodes.NOT_OWNER,
    `session ${key} ${who}; this core has no peer call to forward ${method} to it`,
  );
}

/** A session read (`COMMITTED_READS`) answered from every partition's committed rows. */
async function committedRead(partial: PartialImage, core: GatewayCore, name: string, p: unknown, caller: MethodCaller) {
  const read = COMMITTED_READS.get(name)!;
  const { core: committed, close } = await committedCore(core, partial.database, scopeOf(core.config, name, p));
  try {
    return await read.handle(committed, p as never, caller);
  } finally {
    await close();
  }
}

/** The panel of another gateway's session: its committed row and transcript; what its owner knows in memory is empty, `ownedBy` names it. */
async function foreignPanel(partial: PartialImage, core: GatewayCore, p: { key: string }, caller: MethodCaller) {
  const only = scopeOfKey(core.config, p.key);
  if (!only || partial.holds(only.key)) return sessionsGet.handle(core, p, caller);
  const { core: committed, close } = await committedCore(core, partial.database, { titles: true, only });
  try {
    const memory = {
      lanes: { busy: () => false, queued: () => 0 },
      runs: { active: () => [] },
      gate: { pendingItems: () => [], failures: () => [] },
    };
    const panel = await sessionsGet.handle({ ...committed, ...memory, config: core.config }, p, caller);
    return { ...(panel as Record<string, unknown>), ownedBy: (await ownerOf(partial.database, only.key)).owner };
  } finally {
    await close();
  }
}

/** Refuses a label another session of the agent has in any partition (the handler checks only the image's). */
async function labelFree(partial: PartialImage, core: GatewayCore, p: { key: string; label?: string | null }) {
  const only = p.label ? scopeOfKey(core.config, p.key) : undefined;
  if (!only || !p.label) return;
  const { core: committed, close } = await committedCore(core, partial.database, { titles: false });
  try {
    const { store } = await committed.sessions.forAgent(only.agentId);
    const taken = (await store.select({ label: p.label })).find((row) => row.key !== only.key);
    if (taken) throw labelTaken(p.label, taken.key);
  } finally {
    await close();
  }
}

/**
 * A write of one session: run here when this core holds it, else forwarded to the gateway that does
 * (./write-forward.ts), or refused naming it when this core has no peer call. A label is checked
 * here, against every partition, before either.
 */
function ownedOnly(partial: PartialImage, method: GatewayMethod) {
  return {
    ...method,
    async handle(core: GatewayCore, p: unknown, caller: MethodCaller) {
      const key = writtenSession(method.name, p, core);
      const away = key !== undefined && !partial.holds(key) ? key : undefined;
      if (away !== undefined && !partial.call) throw await notOwner(partial.database, method.name, away);
      if (method.name === sessionsPatch.name)
        await labelFree(partial, core, p as { key: string; label?: string | null });
      if (away === undefined || !partial.call) return method.handle(core, p, caller);
      return forwardWrite(
        { database: partial.database, call: partial.call },
        { method: method.name, key: away, p },
        caller,
      );
    },
  };
}

type WaitParams = Parameters<typeof agentWait.handle>[1];

/**
 * `agent.wait` as before, and a run this core does not know that another gateway's inbox holds
 * (its hand-off row drained there) found in the committed inbox rows; then waited for its stored
 * end. Looked up again after: a run that ended between the two reads is found by its end.
 */
async function waitAnywhere(partial: PartialImage, core: GatewayCore, p: WaitParams, caller: MethodCaller) {
  const find = async (runId: string) =>
    (await core.runs.find(runId)) ?? (await storedPendingRun(partial.database, runId)) ?? core.runs.find(runId);
  return agentWait.handle({ runs: { find, waitFor: core.runs.waitFor, get: core.runs.get } }, p, caller);
}

/** `method` as a core holding only the partitions `partial` says answers it (most methods: unchanged). */
export function partialMethod(partial: PartialImage, method: GatewayMethod): GatewayMethod {
  if (COMMITTED_READS.has(method.name))
    return { ...method, handle: (core, p, caller) => committedRead(partial, core, method.name, p, caller) };
  if (method.name === agentWait.name)
    return { ...method, handle: (core, p, caller) => waitAnywhere(partial, core, p as WaitParams, caller) };
  if (method.name === sessionsGet.name)
    return { ...method, handle: (core, p, caller) => foreignPanel(partial, core, p as { key: string }, caller) };
  return isSessionWrite(method.name) ? ownedOnly(partial, method) : method;
}
