// The per-session writes of gateway clients (docs/scale-out.md "Reads in many mode"): which session
// each changes, and which gateway holds that session's partition. In `cluster.owners: "many"` the
// global holder forwards such a write of another gateway's session to it (./write-forward.ts), and
// that gateway runs it on its own core (./peer-methods.ts).
import { leaseOfPart } from "../cluster/cluster-status.js";
import { leaseHolder } from "../cluster/lease-sql.js";
import { partOf } from "../routing/partition.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { scopeOfKey } from "./committed-reads.js";
import type { GatewayCore } from "./gateway-core.js";
import { agentRun } from "./methods/agent-methods.js";
import { chatAbort } from "./methods/chat-methods.js";
import { sessionsDelete, sessionsPatch, sessionsReset } from "./methods/session-methods.js";
import { subagentsStop } from "./methods/session-panel-methods.js";
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

/** The names of the per-session writes. */
export const SESSION_WRITE_NAMES: readonly string[] = [...SESSION_WRITES.keys()];

/** Whether `method` is a per-session write. */
export const isSessionWrite = (method: string): boolean => SESSION_WRITES.has(method);

/** The canonical key of the session write `method` changes with parsed params `p` on `core`; undefined: none (or no session key). */
export function writtenSession(method: string, p: unknown, core: GatewayCore): string | undefined {
  const raw = SESSION_WRITES.get(method)?.(p as KeyedParams, core);
  return raw === undefined ? undefined : scopeOfKey(core.config, raw)?.key;
}

/** The gateway holding the partition of session `key` ("" when none does right now), and where it listens. */
export async function ownerOf(
  database: PostgresDatabase,
  key: string,
): Promise<{ owner: string; part: number; address?: string }> {
  const part = partOf(key, database.partitions);
  const holder = await database.transaction((client) => leaseHolder(client, leaseOfPart(part)), {
    single: true,
    readOnly: true,
  });
  return { owner: holder.owner, part, ...(holder.address && { address: holder.address }) };
}

/** The peer call a gateway runs per-session write `method` under (./peer-methods.ts). */
export const peerMethodName = (method: string): string => `method:${method}`;
