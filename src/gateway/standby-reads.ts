// The reads a standby answers itself instead of relaying them to the owner (docs/scale-out.md
// "Reads on a standby"): `sessions.list`, `sessions.resolve` and `chat.history` from the rows
// committed in PostgreSQL, and `agent.wait` for a run whose end is stored (or promised by the
// hand-off inbox). The handlers are the owner's own (./methods/read-core.ts), run on a core whose
// lists are selected in SQL (../sessions/postgres-session-select.ts) and whose one row read by key
// is loaded first, for each request, so both answers have one shape.
import { createRunRegistry } from "../agents/run-registry.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { type SessionEntry, SessionEntrySchema } from "../sessions/session-entry.js";
import { postgresSessionSelect } from "../sessions/postgres-session-select.js";
import { createSessionKeyCache } from "../sessions/session-key-cache.js";
import { sessionsTableName } from "../sessions/session-table.js";
import { createPostgresTranscripts } from "../sessions/transcripts/postgres-transcripts.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { openPostgresState } from "../state/postgres/postgres-state.js";
import { checkWith } from "../state/schema-check.js";
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

/** What one read needs loaded: the sub-agent records (titles), and the one session's row it reads by key, if any. */
interface ReadScope {
  titles: boolean;
  only?: { agentId: string; key: string } | undefined;
}

/** A read core over the rows committed now: lists selected in SQL, the one row read by key loaded first. */
async function committedCore(deps: StandbyReadsDeps, database: PostgresDatabase, scope: ReadScope) {
  const { config, logger } = deps;
  const state = openPostgresState(database, { logger, readOnly: true });
  const keys = createCoreKeys(config);
  const subagents = scope.titles ? await state.table<SubagentRecord>(subagentTableSpec("subagents.json")) : undefined;
  const only = scope.only && { ...scope.only, entry: await storedEntry(database, scope.only.agentId, scope.only.key) };
  const core: SessionReadCore = {
    agentIds: keys.agentIds,
    parseKey: keys.parseKey,
    clientChannel: CLIENT_CHANNEL,
    sessions: { forAgent: async (agentId) => committedReads(database, config, agentId, only) },
    subagents: { byChild: (childKey) => [...(subagents?.values() ?? [])].find((r) => r.childSessionKey === childKey) },
  };
  return { core, close: () => state.close() };
}

/** The session a read asks for by key (`chat.history`, `sessions.resolve`), as its handler will parse it; undefined: none, or let the handler answer the bad params. */
function keyScope(config: Config, method: string, params: unknown): ReadScope["only"] {
  const schema = method === chatHistory.name ? chatHistory.params : sessionsResolve.params;
  const parsed = schema.safeParse(params ?? {});
  const rawKey = parsed.success && ("sessionKey" in parsed.data ? parsed.data.sessionKey : parsed.data.key);
  if (!rawKey) return undefined;
  try {
    const { parsed: key, agentId } = createCoreKeys(config).parseKey(rawKey);
    return { agentId, key: key.key };
  } catch {
    return undefined;
  }
}

/** Session `key`'s committed row, by its primary key; an invalid row is no session, as in the store. */
async function storedEntry(
  database: PostgresDatabase,
  agentId: string,
  key: string,
): Promise<SessionEntry | undefined> {
  const { rows } = await database.transaction(
    (client) =>
      client.query<{ value: unknown }>("SELECT value FROM state_rows WHERE tbl = $1 AND key = $2", [
        sessionsTableName(agentId),
        key,
      ]),
    { single: true, readOnly: true },
  );
  const checked = rows[0] && checkWith(SessionEntrySchema)(key, rows[0].value);
  return checked && "value" in checked ? checked.value : undefined;
}

/** One agent's committed sessions: lists selected in SQL, `get` only of the row loaded first (`only`). */
function committedReads(
  database: PostgresDatabase,
  config: Config,
  agentId: string,
  only: { agentId: string; key: string; entry: SessionEntry | undefined } | undefined,
): SessionReadsOf {
  const keys = createSessionKeyCache({
    defaultAgentId: agentId,
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  });
  return {
    store: {
      get(asked) {
        if (only?.agentId === agentId && asked === only.key) return only.entry;
        throw new Error(`session "${asked}" was not loaded for this read; only its lists are read in SQL`);
      },
      select: postgresSessionSelect(database, { agentId, keys }),
    },
    transcripts: createPostgresTranscripts({ database, agentId }),
  };
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
        const only = method === sessionsList ? undefined : keyScope(config, method.name, request.params);
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
