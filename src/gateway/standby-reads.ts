// The reads a standby answers itself instead of relaying them to the owner (docs/scale-out.md
// "Reads on a standby"): `sessions.list`, `sessions.resolve` and `chat.history` from the rows
// committed in PostgreSQL, and `agent.wait` for a run whose end is stored (or promised by the
// hand-off inbox). The handlers are the owner's own (./methods/read-core.ts), run on a core of
// committed rows (./committed-reads.ts), so both answers have one shape.
import { createRunRegistry } from "../agents/run-registry.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { COMMITTED_READS, committedCore, scopeOf } from "./committed-reads.js";
import { openRunResults } from "./core-inbound.js";
import { answerWith } from "./dispatch-request.js";
import { agentWait } from "./methods/agent-methods.js";
import { RequestFrameSchema } from "./protocol.js";
import type { StandbyReads } from "./standby-front.js";

/** What {@link createStandbyReads} needs. */
export interface StandbyReadsDeps {
  config: Config;
  logger: Logger;
  /** the schema's database once this gateway joined its cluster (unfenced: it only reads); undefined before */
  database(): PostgresDatabase | undefined;
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
    serves: (method) => COMMITTED_READS.has(method) || method === agentWait.name,
    async answer(raw, client) {
      const database = deps.database();
      const frame = RequestFrameSchema.safeParse(raw);
      if (!database || !frame.success) return undefined;
      const request = { id: frame.data.id, params: frame.data.params };
      const context = { caller: { client }, logger };
      const method = COMMITTED_READS.get(frame.data.method);
      if (method) {
        const { core, close } = await committedCore(deps, database, scopeOf(config, method.name, request.params));
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
