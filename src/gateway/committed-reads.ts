// Session reads of the rows committed in PostgreSQL (docs/scale-out.md "Reads on a standby" and
// "Reads in many mode"): a read core whose lists are selected in SQL
// (../sessions/postgres-session-select.ts) and whose one row read by key is loaded first, for each
// request, so the owner's handlers (./methods/read-core.ts) answer from it in the image's shape.
// A standby answers with it (./standby-reads.ts), and so does a core holding only some partitions
// (./partial-methods.ts).
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
import { type SubagentRecord, subagentsOf } from "../tools/subagent-registry.js";
import { createCoreKeys } from "./core-keys.js";
import { chatHistory } from "./methods/chat-methods.js";
import type { SessionReadCore, SessionReadsOf } from "./methods/read-core.js";
import { sessionsList, sessionsResolve } from "./methods/session-methods.js";
import { CLIENT_CHANNEL } from "./webchat-adapter.js";

/** The session reads answered from committed rows, by method name. */
export const COMMITTED_READS = new Map([sessionsList, sessionsResolve, chatHistory].map((m) => [m.name, m]));

/** What a read of committed rows needs: the gateway's config (agents, session keys) and logger. */
export interface CommittedReadsDeps {
  config: Config;
  logger: Logger;
}

/** What one read needs loaded: the sub-agent records (titles), and the one session's row it reads by key, if any. */
export interface ReadScope {
  titles: boolean;
  only?: { agentId: string; key: string } | undefined;
}

/** A read core over committed rows, with the sub-agent records loaded (`list` as the registry's). */
type CommittedCore = SessionReadCore & {
  subagents: SessionReadCore["subagents"] & { list(requesterKey: string): SubagentRecord[] };
};

/** A read core over the rows committed now: lists selected in SQL, the one row read by key loaded first; close it after the read. */
export async function committedCore(deps: CommittedReadsDeps, database: PostgresDatabase, scope: ReadScope) {
  const { config, logger } = deps;
  const state = openPostgresState(database, { logger, readOnly: true });
  const keys = createCoreKeys(config);
  const subagents = scope.titles ? await state.table<SubagentRecord>(subagentTableSpec("subagents.json")) : undefined;
  const records = () => subagents?.values() ?? [];
  const only = scope.only && { ...scope.only, entry: await storedEntry(database, scope.only.agentId, scope.only.key) };
  const core: CommittedCore = {
    agentIds: keys.agentIds,
    parseKey: keys.parseKey,
    clientChannel: CLIENT_CHANNEL,
    sessions: { forAgent: async (agentId) => committedReads(database, config, agentId, only) },
    subagents: {
      byChild: (childKey) => [...records()].find((r) => r.childSessionKey === childKey),
      list: (requesterKey) => subagentsOf(records(), requesterKey),
    },
  };
  return { core, close: () => state.close() };
}

/** The session a read asks for by key (`chat.history`, `sessions.resolve`), as its handler will parse it; undefined: none, or let the handler answer the bad params. */
function keyScope(config: Config, method: string, params: unknown): ReadScope["only"] {
  const schema = method === chatHistory.name ? chatHistory.params : sessionsResolve.params;
  const parsed = schema.safeParse(params ?? {});
  const rawKey = parsed.success && ("sessionKey" in parsed.data ? parsed.data.sessionKey : parsed.data.key);
  return rawKey ? scopeOfKey(config, rawKey) : undefined;
}

/** The agent and canonical key of `rawKey`; undefined when it is no session key (the handler says so). */
export function scopeOfKey(config: Config, rawKey: string): ReadScope["only"] {
  try {
    const { parsed: key, agentId } = createCoreKeys(config).parseKey(rawKey);
    return { agentId, key: key.key };
  } catch {
    return undefined;
  }
}

/** What a read of method `name` loads: titles for lists, the session it names by key. */
export function scopeOf(config: Config, name: string, params: unknown): ReadScope {
  return {
    titles: name === sessionsList.name,
    only: name === sessionsList.name ? undefined : keyScope(config, name, params),
  };
}

/** Session `key`'s committed row, by its primary key; an invalid row is no session, as in the store. */
export async function storedEntry(
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

/** How many sessions agent `agentId` has committed (every partition's), as `status` counts them in many mode. */
export async function storedSessionCount(database: PostgresDatabase, agentId: string): Promise<number> {
  const { rows } = await database.transaction(
    (client) =>
      client.query<{ n: number }>("SELECT count(*)::int AS n FROM state_rows WHERE tbl = $1", [
        sessionsTableName(agentId),
      ]),
    { single: true, readOnly: true },
  );
  return rows[0]?.n ?? 0;
}

/**
 * A run stored to run in any gateway's inbox (its pending row, committed): how `agent.wait` on a
 * core holding some partitions finds a run another gateway drained from the hand-off inbox.
 */
export async function storedPendingRun(database: PostgresDatabase, runId: string) {
  const { rows } = await database.transaction(
    (client) =>
      client.query<{ session_key: string | null; queued: number }>(
        `SELECT coalesce(value->>'sessionKey', value->'startedTurn'->>'sessionKey', value->>'session') AS session_key,
                (value->>'receivedAt')::float8 AS queued
         FROM state_rows WHERE tbl = 'inbox' AND value->>'status' = 'pending' AND (value->>'runId' = $1 OR value->>'turn' = $1)
         LIMIT 1`,
        [runId],
      ),
    { single: true, readOnly: true },
  );
  const row = rows[0];
  return row && { runId, status: "queued" as const, sessionKey: row.session_key ?? "", queuedAt: row.queued };
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
