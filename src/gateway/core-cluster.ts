// The gateway's place in the cluster of its PostgreSQL schema (docs/scale-out.md). Until sessions
// have owners of their own, one gateway writes a schema: it holds the schema's writer lease, every
// state transaction checks that lease's fence first, and a second gateway is refused at start.
import os from "node:os";
import type pg from "pg";
import type { ClusterNode } from "../cluster/cluster-node.js";
import { type ClusterStatus, LOCAL_CLUSTER_NOTE } from "../cluster/cluster-status.js";
import type { HeldLease } from "../cluster/lease-sql.js";
import { processNodeId } from "../cluster/node-id.js";
import { readRelaySecret } from "../cluster/relay-secret.js";
import type { Config } from "../config/schema/index.js";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** The lease of the schema's one writer (until sessions are owned one by one). */
const WRITER_LEASE = "schema:writer";

/** What `cluster.status` answers on the local backend. */
interface LocalClusterStatus {
  backend: "local";
  note: string;
}

/** The gateway's cluster membership; it joins when its PostgreSQL state opens. */
export interface GatewayCluster {
  readonly nodeId: string;
  /** Joins, takes the writer lease (refused naming the holder) and fences every transaction of `database`. */
  guard(database: PostgresDatabase): Promise<PostgresDatabase>;
  /** Records the port the gateway listens on (`--port 0` picks one). */
  listening(port: number): Promise<void>;
  status(): Promise<ClusterStatus | LocalClusterStatus>;
  /** The schema's relay secret once joined (standbys' relayed requests carry it); undefined on the local backend. */
  relaySecret(): string | undefined;
}

/** Options of {@link createGatewayCluster}. */
export interface GatewayClusterOptions {
  config: Config;
  logger: Logger;
  /** the port asked for, until the gateway listens */
  port: number;
  /** what a gateway fenced out does; default: log and exit(1) at once: its writes are refused and its state is the new writer's */
  onFencedOut?: (lease: HeldLease) => void;
}

/** The one-line refusal of a second gateway on a schema. */
function writerTaken(schema: string, holder: { owner: string; host?: string; pid?: number; port?: number }) {
  const where = [
    holder.host && `host ${holder.host}`,
    holder.pid && `pid ${holder.pid}`,
    holder.port && `port ${holder.port}`,
  ];
  return new SwitchboardError(
    "BUSY",
    `another gateway (node ${holder.owner}, ${where.filter(Boolean).join(", ")}) already runs on PostgreSQL schema "${schema}"; ` +
      "stop it first, or give this gateway another state.postgres.schema (gateways do not share a schema yet: docs/scale-out.md)",
  );
}

/**
 * One transaction begun with the writer lease's fence check (BEGIN, then the check), then `fn`,
 * then COMMIT; rolled back on any failure (the row writer's batch does not come here: it checks
 * inside its one statement). `database.transaction` runs it as `single` (no BEGIN/COMMIT of its
 * own) and still retries it when the connection breaks.
 */
async function fencedTransaction<T>(
  client: pg.PoolClient,
  node: ClusterNode,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  try {
    await node.checkFence(client, WRITER_LEASE, { begin: true });
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {}); // a broken connection: the transaction is gone with it
    throw err;
  }
}

/**
 * `database` whose every write checks the writer lease's fence (FOR SHARE): in a transaction that
 * checks it first, or, for one statement that carries the check itself (`fencedInside`, e.g. the
 * row writer's batch), inside that statement. One statement that only reads (`readOnly`) runs as
 * it is. Its close leaves the cluster.
 */
function fenced(database: PostgresDatabase, node: ClusterNode): PostgresDatabase {
  let closing: Promise<void> | undefined;
  return {
    pool: database.pool,
    schema: database.schema,
    shownUrl: database.shownUrl,
    schemaVersion: database.schemaVersion,
    health: () => database.health(),
    fence: () => node.fence(WRITER_LEASE),
    transaction: (fn, options) =>
      options?.single && (options.fencedInside || options.readOnly)
        ? database.transaction((client) => node.fencedInside(WRITER_LEASE, () => fn(client)), { single: true })
        : database.transaction((client) => fencedTransaction(client, node, fn), { single: true }),
    close() {
      closing ??= node.leave().then(() => database.close());
      return closing;
    },
  };
}

/** The gateway's membership (joined by `guard` when the state opens on PostgreSQL). */
export function createGatewayCluster(options: GatewayClusterOptions): GatewayCluster {
  const { config, logger } = options;
  const nodeId = config.gateway.nodeId ?? processNodeId();
  let node: ClusterNode | undefined;
  let relaySecret: string | undefined;
  const onFencedOut =
    options.onFencedOut ??
    ((lease: HeldLease) => {
      logger.error(
        { nodeId, lease: lease.name, fence: lease.fence },
        "another gateway took this schema over; stopping now",
      );
      process.exit(1);
    });
  return {
    nodeId,
    async guard(database) {
      const { joinCluster } = await import("../cluster/cluster-node.js");
      const joined = await joinCluster({
        pool: database.pool,
        schema: database.schema,
        member: { nodeId, host: os.hostname(), pid: process.pid, port: options.port },
        cluster: config.cluster,
        logger,
        onLost: onFencedOut,
      });
      const taken = await joined
        .acquire(WRITER_LEASE)
        .then(async (result) => {
          relaySecret = await readRelaySecret(database.pool);
          return result;
        })
        .catch(async (err: unknown) => {
          await joined.leave();
          throw err;
        });
      if ("holder" in taken) {
        await joined.leave();
        throw writerTaken(database.schema, taken.holder);
      }
      node = joined;
      logger.info({ nodeId, fence: taken.lease.fence }, "holding the schema's writer lease");
      return fenced(database, joined);
    },
    listening: async (port) => node?.listening(port),
    relaySecret: () => relaySecret,
    status: async () => (node ? node.status() : { backend: "local", note: LOCAL_CLUSTER_NOTE }),
  };
}
