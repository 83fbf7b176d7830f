// The gateway's place in the cluster of its PostgreSQL schema (docs/scale-out.md). The gateway
// holding the schema's writer lease is its owner: every state transaction checks that lease's fence
// first. Every other gateway is a standby: it waits for the lease and takes over when it frees.
import os from "node:os";
import type pg from "pg";
import type { ClusterNode } from "../cluster/cluster-node.js";
import {
  ACCOUNT_LEASE_PREFIX,
  type ClusterStatus,
  LOCAL_CLUSTER_NOTE,
  WRITER_LEASE,
} from "../cluster/cluster-status.js";
import { type HeldLease, type LeaseHolder, leaseHolder } from "../cluster/lease-sql.js";
import { processNodeId } from "../cluster/node-id.js";
import { readRelaySecret } from "../cluster/relay-secret.js";
import { createSendGuard } from "../cluster/send-guard.js";
import type { Config } from "../config/schema/index.js";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import type { OwnerAddress } from "./standby-front.js";

/** What `cluster.status` answers on the local backend. */
interface LocalClusterStatus {
  backend: "local";
  note: string;
}

/** The gateway's cluster membership; it joins when its PostgreSQL state opens. */
export interface GatewayCluster {
  readonly nodeId: string;
  /** Joins, takes the writer lease (as a standby until it frees) and fences every transaction of `database`. */
  guard(database: PostgresDatabase): Promise<PostgresDatabase>;
  /** The gateway that owns the schema now (read from the database), or undefined. */
  owner(): Promise<OwnerAddress | undefined>;
  /** The schema's relay secret (created by the first member that asks). */
  relaySecret(): Promise<string>;
  /** The member, once joined (the owner takes its account leases through it). */
  node(): ClusterNode | undefined;
  /** The owner takes a channel account's lease (`account:<channel>:<accountId>`) before it connects the account; nothing on the local backend. */
  holdAccount(channel: string, accountId: string): Promise<void>;
  /** Gives every account lease up (the adapters stopped), so the next owner takes them at once. */
  releaseAccounts(): Promise<void>;
  /** Before every platform send: false when this owner must send nothing (its lease is past its age and gone: it stops); always true on the local backend. */
  mayStillSend(): Promise<boolean>;
  /** `{ keys }`: also the owner's session keys (`cluster status --json`). */
  status(options?: { keys?: boolean }): Promise<ClusterStatus | LocalClusterStatus>;
}

/** Options of {@link createGatewayCluster}. */
export interface GatewayClusterOptions {
  config: Config;
  logger: Logger;
  /** the port the gateway listens on (its standby server listens before it joins) */
  port: number;
  /** this gateway could not take the schema: it serves as a standby of `owner` until the lease frees */
  onStandby?: (owner: OwnerAddress) => void;
  /** a stop while a standby: the wait for the lease ends, the member leaves and `guard` rejects */
  signal?: AbortSignal;
  /** what a gateway fenced out does; default: log and exit(1) at once: its writes are refused and its state is the new writer's */
  onFencedOut?: (lease: HeldLease) => void;
}

/** Where peers reach this gateway: `cluster.advertiseHost`, else `gateway.bind` when it names one address, else the host name. */
export function advertisedAddress(config: Config, port: number): string {
  const bind = config.gateway.bind;
  const host = config.cluster.advertiseHost ?? (["0.0.0.0", "::", ""].includes(bind) ? os.hostname() : bind);
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The one-line refusal of a gateway on a schema whose owner cannot be relayed to (a version before migration 0005). */
function writerTaken(schema: string, holder: { owner: string; host?: string; pid?: number; port?: number }) {
  const where = [
    holder.host && `host ${holder.host}`,
    holder.pid && `pid ${holder.pid}`,
    holder.port && `port ${holder.port}`,
  ];
  return new SwitchboardError(
    "BUSY",
    `another gateway (node ${holder.owner}, ${where.filter(Boolean).join(", ")}) already runs on PostgreSQL schema "${schema}"; ` +
      "it runs a version that cannot take standbys: stop it first (docs/scale-out.md), or give this gateway another state.postgres.schema",
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

/** Stopped while waiting as a standby: nothing was opened. */
class StandbyStoppedError extends SwitchboardError {
  constructor() {
    super("UNAVAILABLE", "the gateway stopped while it was a standby");
  }
}

/** Waits as a standby of `holder` until the writer lease is this member's; leaves on a stop or a failure. */
async function waitForWriter(
  joined: ClusterNode,
  holder: LeaseHolder,
  options: GatewayClusterOptions,
  schema: string,
): Promise<HeldLease> {
  try {
    // A holder with no address runs a version before migration 0005: it relays nothing, so it is refused as before.
    if (holder.owner && !holder.address) throw writerTaken(schema, holder);
    if (holder.owner && holder.address) options.onStandby?.({ nodeId: holder.owner, address: holder.address });
    options.logger.info({ owner: holder.owner, address: holder.address }, "serving as a standby of the schema's owner");
    return await joined.acquireWhenFree(WRITER_LEASE, options.signal);
  } catch (err) {
    await joined.leave();
    throw options.signal?.aborted ? new StandbyStoppedError() : err;
  }
}

/** The gateway's membership (joined by `guard` when the state opens on PostgreSQL). */
export function createGatewayCluster(options: GatewayClusterOptions): GatewayCluster {
  const { config, logger } = options;
  const nodeId = config.gateway.nodeId ?? processNodeId();
  let member: { node: ClusterNode; pool: pg.Pool } | undefined;
  let node: ClusterNode | undefined;
  const accounts = new Set<string>();
  let sendGuard: (() => Promise<boolean>) | undefined;
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
      const address = advertisedAddress(config, options.port);
      const joined = await joinCluster({
        pool: database.pool,
        schema: database.schema,
        member: { nodeId, host: os.hostname(), pid: process.pid, port: options.port, address },
        cluster: config.cluster,
        logger,
        onLost: onFencedOut,
      });
      member = { node: joined, pool: database.pool };
      const taken = await joined.acquire(WRITER_LEASE).catch(async (err: unknown) => {
        await joined.leave();
        throw err;
      });
      const lease =
        "lease" in taken ? taken.lease : await waitForWriter(joined, taken.holder, options, database.schema);
      node = joined;
      sendGuard = createSendGuard({
        renewedAt: () => joined.renewedAt(WRITER_LEASE),
        renewNow: async () => {
          await joined.renewNow();
          return joined.held(WRITER_LEASE) !== undefined;
        },
        leaseTtlMs: config.cluster.leaseTtlMs,
        onLost: () => {
          logger.error({ nodeId }, "this gateway's lease is older than its TTL (it was paused); sending nothing");
          onFencedOut(lease);
        },
      });
      logger.info({ nodeId, fence: lease.fence, address }, "holding the schema's writer lease: this gateway owns it");
      return fenced(database, joined);
    },
    async owner() {
      if (!member) return undefined;
      const holder = await leaseHolder(member.pool, WRITER_LEASE);
      return holder.owner && holder.address ? { nodeId: holder.owner, address: holder.address } : undefined;
    },
    relaySecret: async () => {
      if (!member) throw new SwitchboardError("UNAVAILABLE", "the gateway has not joined its cluster yet");
      return readRelaySecret(member.pool);
    },
    node: () => node,
    mayStillSend: () => (sendGuard ? sendGuard() : Promise.resolve(true)),
    async holdAccount(channel, accountId) {
      if (!node) return;
      const name = `${ACCOUNT_LEASE_PREFIX}${channel}:${accountId}`;
      // A paused former owner may hold it until its TTL: the account waits, as the schema did.
      await node.acquireWhenFree(name, options.signal);
      accounts.add(name);
      logger.info({ nodeId, lease: name }, "holding a channel account");
    },
    async releaseAccounts() {
      const held = [...accounts];
      accounts.clear();
      for (const name of held)
        await node
          ?.release(name)
          .catch((err: unknown) => logger.warn({ err, lease: name }, "account lease not released"));
    },
    status: async (opts) => (member ? member.node.status(opts) : { backend: "local", note: LOCAL_CLUSTER_NOTE }),
  };
}
