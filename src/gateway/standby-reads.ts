// The reads a standby answers itself instead of relaying them to the owner (docs/scale-out.md
// "Reads on a standby"): `sessions.list`, `sessions.resolve` and `chat.history` from the rows
// committed in PostgreSQL, and `agent.wait` for a run whose end is stored (or promised by the
// hand-off inbox). The handlers are the owner's own (./methods/read-core.ts), run on a core whose
// stores are loaded read-only for each request, so both answers have one shape.
import { createRunRegistry } from "../agents/run-registry.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { SessionEntrySchema } from "../sessions/session-entry.js";
import { createSessionStore } from "../sessions/session-store.js";
import { sessionsTableName } from "../sessions/session-table.js";
import { createPostgresTranscripts } from "../sessions/transcripts/postgres-transcripts.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { openPostgresState } from "../state/postgres/postgres-state.js";
import { checkWith } from "../state/schema-check.js";
import type { StatePort } from "../state/state-port.js";
import { subagentTableSpec } from "../tools/subagent-lifecycle.js";
import type { SubagentRecord } from "../tools/subagent-registry.js";
import { openRunResults } from "./core-inbound.js";
import { createCoreKeys } from "./core-keys.js";
import { answerWith } from "./dispatch-request.js";
import { agentWait } from "./methods/agent-methods.js";
import { chatHistory } from "./methods/chat-methods.js";
import type { SessionReadCore, SessionReadsOf } from "./methods/read-core.js";
import { sessionsList, sessionsResolve } from "./methods/session-methods.js";
import { RequestFrameSchema } from "./protocol.js";
import type { StandbyReads } from "./standby-front.js";
import { CLIENT_CHANNEL } from "./webchat-adapter.js";

/** The session reads a standby answers from PostgreSQL; `agent.wait` only for a run whose end it can read. */
const SESSION_READS = new Map([sessionsList, sessionsResolve, chatHistory].map((method) => [method.name, method]));

/** What {@link createStandbyReads} needs. */
export interface StandbyReadsDeps {
  config: Config;
  logger: Logger;
  /** the schema's database once this gateway joined its cluster (unfenced: it only reads); undefined before */
  database(): PostgresDatabase | undefined;
}

/** What one read needs loaded: the sub-agent records (titles), or only one session's row (`chat.history`). */
interface ReadScope {
  titles: boolean;
  only?: { agentId: string; key: string } | undefined;
}

/** A read core over the rows committed now: each agent's store loaded read-only at first use (or one row of it). */
async function committedCore(deps: StandbyReadsDeps, database: PostgresDatabase, scope: ReadScope) {
  const { config, logger } = deps;
  const state = openPostgresState(database, { logger, readOnly: true });
  const keys = createCoreKeys(config);
  const opened = new Map<string, Promise<SessionReadsOf>>();
  const subagents = scope.titles ? await state.table<SubagentRecord>(subagentTableSpec("subagents.json")) : undefined;
  const open = (agentId: string) =>
    scope.only?.agentId === agentId
      ? oneSessionReads(database, agentId, scope.only.key)
      : openAgentReads(state, { config, logger, database, agentId });
  const core: SessionReadCore = {
    agentIds: keys.agentIds,
    parseKey: keys.parseKey,
    clientChannel: CLIENT_CHANNEL,
    sessions: {
      forAgent(agentId) {
        const reads = opened.get(agentId) ?? open(agentId);
        opened.set(agentId, reads);
        return reads;
      },
    },
    subagents: { byChild: (childKey) => [...(subagents?.values() ?? [])].find((r) => r.childSessionKey === childKey) },
  };
  return { core, close: () => state.close() };
}

/** The session `chat.history` asks for, as its handler will parse it; undefined: let the handler answer the bad params. */
function historyScope(config: Config, params: unknown): ReadScope["only"] {
  const parsed = chatHistory.params.safeParse(params ?? {});
  if (!parsed.success) return undefined;
  try {
    const { parsed: key, agentId } = createCoreKeys(config).parseKey(parsed.data.sessionKey);
    return { agentId, key: key.key };
  } catch {
    return undefined;
  }
}

/** One agent's reads with only session `key` loaded, by its primary key: what `chat.history` reads of the store. */
async function oneSessionReads(database: PostgresDatabase, agentId: string, key: string): Promise<SessionReadsOf> {
  const { rows } = await database.transaction(
    (client) =>
      client.query<{ value: unknown }>("SELECT value FROM state_rows WHERE tbl = $1 AND key = $2", [
        sessionsTableName(agentId),
        key,
      ]),
    { single: true, readOnly: true },
  );
  // An invalid row is no session, as in the store (which keeps it aside and reads it as missing).
  const checked = rows[0] && checkWith(SessionEntrySchema)(key, rows[0].value);
  const entry = checked && "value" in checked ? checked.value : undefined;
  return {
    store: {
      get: (asked) => (asked === key ? entry : undefined),
      list: () => {
        throw new Error("only one session was loaded for this read; list needs the whole store");
      },
    },
    transcripts: createPostgresTranscripts({ database, agentId }),
  };
}

/** One agent's store (read-only) and transcripts, on `state`. */
async function openAgentReads(
  state: StatePort,
  deps: { config: Config; logger: Logger; database: PostgresDatabase; agentId: string },
): Promise<SessionReadsOf> {
  const { config, agentId } = deps;
  const store = await createSessionStore({
    state,
    path: `sessions-${agentId}.json`, // a name only: on PostgreSQL the table is `sessions:<agentId>`
    keys: { defaultAgentId: agentId, mainKey: config.session.mainKey, scope: config.session.scope },
    logger: deps.logger,
  });
  return { store, transcripts: createPostgresTranscripts({ database: deps.database, agentId }) };
}

/** The reads a standby serves itself, over the database `deps.database()` gives once joined. */
export function createStandbyReads(deps: StandbyReadsDeps): StandbyReads {
  const { config, logger } = deps;
  let runs: { registry: ReturnType<typeof createRunRegistry>; close(): Promise<void> } | undefined;
  const runsOf = (database: PostgresDatabase) => {
    if (!runs) {
      const results = openRunResults(database, { logger, now: Date.now });
      runs = { registry: createRunRegistry({ durable: results.durable }), close: results.close };
    }
    return runs.registry;
  };
  return {
    serves: (method) => SESSION_READS.has(method) || method === agentWait.name,
    async answer(raw, client) {
      const database = deps.database();
      const frame = RequestFrameSchema.safeParse(raw);
      if (!database || !frame.success) return undefined;
      const request = { id: frame.data.id, params: frame.data.params };
      const context = { caller: { client }, logger };
      const method = SESSION_READS.get(frame.data.method);
      if (method) {
        const only = method === chatHistory ? historyScope(config, request.params) : undefined;
        const scope = { titles: method === sessionsList, only };
        const { core, close } = await committedCore(deps, database, scope);
        return await answerWith(method, core, request, context).finally(close);
      }
      const runId = (frame.data.params as { runId?: unknown } | undefined)?.runId;
      const registry = runsOf(database);
      // A run this gateway cannot read (unknown, or in the owner's memory and inbox only) is the owner's to answer.
      if (typeof runId !== "string" || !(await registry.find(runId).catch(() => undefined))) return undefined;
      return answerWith(agentWait, { runs: registry }, request, context);
    },
    close: async () => runs?.close(),
  };
}
