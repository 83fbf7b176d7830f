// The stores a gateway core opens first (./gateway-core.ts): the state port (local files or
// PostgreSQL, fenced by the cluster's lease), every agent's sessions and transcripts, the channels'
// own state and the agents' workspaces.
import path from "node:path";
import type { ResolvedModel } from "../agents/models/index.js";
import { workspaceDir } from "../agents/workspace/workspace-dir.js";
import { resolveStorePath } from "../config/paths.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { type OpenTranscripts, createAgentSessionsPool } from "../sessions/agent-sessions.js";
import { postgresTranscriptsOpener } from "../sessions/transcripts/postgres-transcripts.js";
import { openChannelStates } from "../state/channel-state.js";
import { openStateBackend } from "../state/open-state-backend.js";
import type { DatabaseHealth, PostgresDatabase } from "../state/postgres/database.js";
import { openPostgresState } from "../state/postgres/postgres-state.js";
import type { StatePort } from "../state/state-port.js";
import { createLocalWorkspace } from "../workspace/local-workspace.js";
import { postgresWorkspaces } from "../workspace/postgres-workspace.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";
import type { GatewayCluster } from "./core-cluster.js";
import type { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { observeCore } from "./metrics/observe-core.js";

/** What {@link openStores} reads of the core's dependencies (./gateway-core.ts `GatewayCoreDeps` has each). */
export interface CoreStoresDeps {
  config: Config;
  home: string;
  homeDir: string;
  logger: Logger;
  resolveModel: (ref: string) => ResolvedModel;
  state?: StatePort;
  env?: Record<string, string | undefined>;
  openTranscripts?: OpenTranscripts;
  transcriptHandles?: number;
  metrics?: GatewayMetrics;
  cluster?: GatewayCluster;
  /**
   * `cluster.owners: "many"`: the schema's database, opened once for every core the gateway opens in
   * turn (./start-many.ts); the state opens on it and its close leaves the database open.
   */
  database?: PostgresDatabase;
  /** with `database`: the partitions this core holds (only their rows load; a write of another's is refused) */
  parts?: readonly number[];
}

/** One port for every store (the session stores, the outbox, the sub-agent registry, the inbox): the injected one, or the config's backend. */
async function openBackend(
  deps: CoreStoresDeps,
  at: { stateDir: string; now: () => number; journal: ReturnType<typeof observeCore>["journal"] },
) {
  if (deps.state) return { state: deps.state, health: (): DatabaseHealth => ({ ok: true, since: 0 }) };
  const { database } = deps;
  if (database) {
    const state = openPostgresState(database, { logger: deps.logger, ...(deps.parts && { parts: deps.parts }) });
    return { state, database, health: database.health };
  }
  return openStateBackend({
    config: deps.config.state,
    env: deps.env ?? {},
    ...(deps.cluster && { guard: deps.cluster.guard }),
    dir: at.stateDir,
    logger: deps.logger,
    now: at.now,
    ...at.journal,
  });
}

/** The stores' one port and every agent's sessions, with the metrics' view of the journal and the models. */
export async function openStores(deps: CoreStoresDeps, now: () => number) {
  const { config, home, logger } = deps;
  const stateDir = path.join(home, "state");
  const observe = observeCore(deps.metrics);
  const backend = await openBackend(deps, { stateDir, now, journal: observe.journal });
  const { state } = backend;
  const database = "database" in backend ? backend.database : undefined;
  const openTranscripts = deps.openTranscripts ?? (database && postgresTranscriptsOpener(database));
  // The agent workspace lives where the state does: rows on PostgreSQL, the folder on local.
  const workspaceOf: OpenWorkspace = database
    ? postgresWorkspaces(database)
    : (agentId) => createLocalWorkspace(workspaceDir(config, home, agentId));
  // Adapters' own durable state (offsets, device credentials): one table of the same port.
  const channelStates = await openChannelStates(state, { file: path.join(stateDir, "channels.json"), now });
  const sessions = createAgentSessionsPool({
    state,
    session: config.session,
    logger,
    now,
    ...(openTranscripts && { openTranscripts }),
    ...(deps.transcriptHandles !== undefined && { maxOpenTranscripts: deps.transcriptHandles }),
    storePathFor: (agentId) => resolveStorePath(home, agentId, config.session.store, deps.homeDir),
  });
  return {
    stateDir,
    observe,
    state,
    database,
    channelStates,
    storageHealth: backend.health,
    sessions,
    resolveModel: observe.models(deps.resolveModel),
    workspaceOf,
  };
}
