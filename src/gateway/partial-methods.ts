// The gateway methods on a core holding only some partitions (`cluster.owners: "many"`, the
// global holder; docs/scale-out.md "Reads in many mode"): its image holds only its partitions'
// sessions, so the session lists, `sessions.resolve` and `chat.history` read the committed rows of
// every partition (./committed-reads.ts, as a standby does), `sessions.get` of another's session
// too, and a per-session write of a session another gateway owns is refused with NOT_OWNER, naming
// that gateway, instead of touching the partial image. `chat.send` is not refused: its inbox
// entry is forwarded to the session's owner by the inbox.
import { partOf } from "../routing/partition.js";
import { leaseHolder } from "../cluster/lease-sql.js";
import { leaseOfPart } from "../cluster/cluster-status.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { COMMITTED_READS, committedCore, scopeOf, scopeOfKey, storedPendingRun } from "./committed-reads.js";
import type { GatewayCore } from "./gateway-core.js";
import type { PartialImage } from "./partial-image.js";
import { agentRun, agentWait } from "./methods/agent-methods.js";
import { chatAbort } from "./methods/chat-methods.js";
import type { GatewayMethod, MethodCaller } from "./methods/method.js";
import { labelTaken, sessionsDelete, sessionsPatch, sessionsReset } from "./methods/session-methods.js";
import { sessionsGet, subagentsStop } from "./methods/session-panel-methods.js";
import { toolsInvoke } from "./methods/tools-method.js";

/** The params a per-session write names its session with. */
interface KeyedParams {
  key?: string;
  sessionKey?: string;
  agentId?: string;
  deliver?: boolean;
  runId?: string;
}

const mainOf = (core: GatewayCore, agentId?: string) => core.mainKeyOf(agentId?.toLowerCase() ?? core.defaultAgentId());

/** The session each per-session write changes, from its parsed params (undefined: none, e.g. `agent` without `deliver`). */
const SESSION_WRITES = new Map<string, (p: KeyedParams, core: GatewayCore) => string | undefined>([
  [sessionsPatch.name, (p) => p.key],
  [sessionsReset.name, (p) => p.key],
  [sessionsDelete.name, (p) => p.key],
  // A run this core runs is aborted here, whatever the key (it defaults to the main session).
  [chatAbort.name, (p, core) => (p.runId && core.runs.get(p.runId) ? undefined : p.sessionKey)],
  [subagentsStop.name, (p) => p.sessionKey],
  // Session tools read and write the image of the session they act for.
  [toolsInvoke.name, (p, core) => p.sessionKey ?? mainOf(core)],
  // `agent` stores its turn in the session's inbox (forwarded to its owner); `deliver` reads its route from the image.
  [agentRun.name, (p, core) => (p.deliver ? (p.sessionKey ?? mainOf(core, p.agentId)) : undefined)],
]);

/** The node id of the gateway holding the partition of session `key` ("" when none does right now). */
async function ownerOf(database: PostgresDatabase, key: string): Promise<{ owner: string; part: number }> {
  const part = partOf(key, database.partitions);
  const holder = await database.transaction((client) => leaseHolder(client, leaseOfPart(part)), {
    single: true,
    readOnly: true,
  });
  return { owner: holder.owner, part };
}

/** The refusal of `method` on session `key`, which another gateway's partition holds. */
async function notOwner(database: PostgresDatabase, method: string, key: string): Promise<SwitchboardError> {
  const { owner, part } = await ownerOf(database, key);
  const who = owner
    ? `is owned by gateway ${owner} (it holds partition ${part})`
    : `is in partition ${part}, which no gateway holds right now`;
  return new SwitchboardError(
    ErrorCodes.NOT_OWNER,
    `session ${key} ${who}; ${method} of a session this gateway does not own is not forwarded between gateways yet`,
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

/** A write of one session, refused when another gateway owns it. */
function ownedOnly(
  partial: PartialImage,
  method: GatewayMethod,
  keyOf: NonNullable<ReturnType<typeof SESSION_WRITES.get>>,
) {
  return {
    ...method,
    async handle(core: GatewayCore, p: unknown, caller: MethodCaller) {
      const raw = keyOf(p as KeyedParams, core);
      const key = raw === undefined ? undefined : scopeOfKey(core.config, raw)?.key;
      if (key !== undefined && !partial.holds(key)) throw await notOwner(partial.database, method.name, key);
      if (method.name === sessionsPatch.name)
        await labelFree(partial, core, p as { key: string; label?: string | null });
      return method.handle(core, p, caller);
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
  const keyOf = SESSION_WRITES.get(method.name);
  return keyOf ? ownedOnly(partial, method, keyOf) : method;
}
