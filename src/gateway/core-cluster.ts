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
  partitionLeases,
} from "../cluster/cluster-status.js";
import { type HeldLease, type LeaseHolder, leaseHolder } from "../cluster/lease-sql.js";
import { processNodeId } from "../cluster/node-id.js";
import { readRelaySecret } from "../cluster/relay-secret.js";
import { createSendGuard } from "../cluster/send-guard.js";
import type { Config } from "../config/schema/index.js";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { routingSettings } from "../routing/routing-settings.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { joinHostPort } from "./host-port.js";
import { fenced } from "./fenced-database.js";
import { ownerLaneClaims } from "./owner-lane-claims.js";
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
  /** The other gateway that owns the schema now (read from the database); undefined when none does or this one does. */
  owner(): Promise<OwnerAddress | undefined>;
  /**
   * The schema's pool once joined (a standby stores hand-off inbound there, src/hooks/hook-handoff.ts),
   * and its database unfenced (a standby's reads, ./standby-reads.ts); undefined before.
   */
  joined(): { pool: pg.Pool; schema: string; database: PostgresDatabase } | undefined;
  /** The schema's relay secret (created by the first member that asks). */
  relaySecret(): Promise<string>;
  /** The owner takes a channel account's lease (`account:<channel>:<accountId>`) before it connects the account; nothing on the local backend. */
  holdAccount(channel: string, accountId: string): Promise<void>;
  /** Gives every account lease up (the adapters stopped), so the next owner takes them at once. */
  releaseAccounts(): Promise<void>;
  /** Before every platform send: false when this owner must send nothing (its lease is past its age and gone: it stops); always true on the local backend. */
  mayStillSend(): Promise<boolean>;
  /** Before every chunk: whether this owner holds the chunk's lane, claimed in a fenced commit (./owner-lane-claims.ts); always true on the local backend. */
  holdsLane(lane: string, sessionKey: string): Promise<boolean>;
  /** A lane's queue emptied here (no send in flight on it): its claim released, batched (`cluster.owners: "many"` only: with one owner nobody else waits for it). */
  laneEmptied?(lane: string): void;
  /** `{ keys }`: also the owner's session keys (`cluster status --json`). */
  status(options?: { keys?: boolean }): Promise<ClusterStatus | LocalClusterStatus>;
}

/** What a gateway does when another took one of its leases over. */
export type OnLost = (lease: HeldLease) => void;

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
  return joinHostPort(host, port);
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

/** Stopped while waiting as a standby: nothing was opened. */
export class StandbyStoppedError extends SwitchboardError {
  constructor() {
    super("UNAVAILABLE", "the gateway stopped while it was a standby");
  }
}

/** Waits as a standby of `holder` until the writer lease (with `partitions`) is this member's; leaves on a stop or a failure. */
async function waitForWriter(
  joined: ClusterNode,
  holder: LeaseHolder,
  options: GatewayClusterOptions,
  schema: string,
  partitions: readonly string[],
): Promise<HeldLease> {
  try {
    // A holder with no address runs a version before migration 0005: it relays nothing, so it is refused as before.
    if (holder.owner && !holder.address) throw writerTaken(schema, holder);
    if (holder.owner && holder.address) options.onStandby?.({ nodeId: holder.owner, address: holder.address });
    options.logger.info({ owner: holder.owner, address: holder.address }, "serving as a standby of the schema's owner");
    return await joined.acquireWhenFree(WRITER_LEASE, options.signal, partitions);
  } catch (err) {
    await joined.leave();
    throw options.signal?.aborted ? new StandbyStoppedError() : err;
  }
}

/** Joins the schema's cluster as `nodeId` at its advertised address (a node id in use is refused). */
export async function join(options: GatewayClusterOptions, nodeId: string, database: PostgresDatabase, onLost: OnLost) {
  const { joinCluster } = await import("../cluster/cluster-node.js");
  return joinCluster({
    pool: database.pool,
    schema: database.schema,
    member: {
      nodeId,
      host: os.hostname(),
      pid: process.pid,
      port: options.port,
      address: advertisedAddress(options.config, options.port),
      owners: options.config.cluster.owners,
    },
    cluster: options.config.cluster,
    logger: options.logger,
    onLost,
  });
}

/** Refuses to go on (and leaves) when this gateway's routing config or `cluster.owners` differs from a live member's (src/cluster/routing-check.ts). */
export async function checkRouting(joined: ClusterNode, options: GatewayClusterOptions, database: PostgresDatabase) {
  const { checkRoutingConfig } = await import("../cluster/routing-check.js");
  const settings = routingSettings(options.config);
  const { owners } = options.config.cluster;
  const check = { pool: database.pool, schema: database.schema, incarnation: joined.incarnation, settings, owners };
  await checkRoutingConfig({ ...check, logger: options.logger }).catch(async (err: unknown) => {
    await joined.leave();
    throw err;
  });
}

/**
 * Takes the writer lease and every partition's lease of `database`, in one statement (all or
 * none): at once, or as a standby once the owner goes. The owner holds them all (one owner per
 * schema); each write is fenced by the leases of the partitions it touches.
 */
async function takeWriter(
  joined: ClusterNode,
  options: GatewayClusterOptions,
  database: PostgresDatabase,
): Promise<HeldLease> {
  const partitions = partitionLeases(database.partitions);
  const taken = await joined.acquire(WRITER_LEASE, partitions).catch(async (err: unknown) => {
    await joined.leave();
    throw err;
  });
  if ("lease" in taken) return taken.lease;
  // Refused: `taken.holder` holds the first lease found held, the writer lease when another gateway owns the schema.
  return waitForWriter(joined, taken.holder, options, database.schema, partitions);
}

/** The owner's check before every platform send, on its writer lease (src/cluster/send-guard.ts). */
function writerSendGuard(joined: ClusterNode, lease: HeldLease, options: GatewayClusterOptions, onLost: OnLost) {
  return createSendGuard({
    renewedAt: () => joined.renewedAt(WRITER_LEASE),
    renewNow: async () => {
      await joined.renewNow();
      return joined.held(WRITER_LEASE) !== undefined;
    },
    leaseTtlMs: options.config.cluster.leaseTtlMs,
    onLost: () => {
      options.logger.error(
        { nodeId: joined.nodeId },
        "this gateway's lease is older than its TTL (it was paused); sending nothing",
      );
      onLost(lease);
    },
  });
}

/** The owner's channel-account leases: each taken before its account connects, all given up at stop. */
export function accountLeases(owner: () => ClusterNode | undefined, options: GatewayClusterOptions) {
  const held = new Set<string>();
  return {
    async holdAccount(channel: string, accountId: string) {
      const node = owner();
      if (!node) return;
      const name = `${ACCOUNT_LEASE_PREFIX}${channel}:${accountId}`;
      // A paused former owner may hold it until its TTL: the account waits, as the schema did.
      await node.acquireWhenFree(name, options.signal);
      held.add(name);
      options.logger.info({ nodeId: node.nodeId, lease: name }, "holding a channel account");
    },
    async releaseAccounts() {
      const names = [...held];
      held.clear();
      for (const name of names)
        await owner()
          ?.release(name)
          .catch((err: unknown) => options.logger.warn({ err, lease: name }, "account lease not released"));
    },
  };
}

/** What a gateway that lost a lease does; default: log and exit(1) at once (its writes are refused, its state is the new owner's). */
export function fencedOutHandler(options: GatewayClusterOptions, nodeId: string): OnLost {
  return (
    options.onFencedOut ??
    ((lease) => {
      options.logger.error(
        { nodeId, lease: lease.name, fence: lease.fence },
        "another gateway took this schema over; stopping now",
      );
      process.exit(1);
    })
  );
}

/** The gateway's membership (joined by `guard` when the state opens on PostgreSQL). */
export function createGatewayCluster(options: GatewayClusterOptions): GatewayCluster {
  const nodeId = options.config.gateway.nodeId ?? processNodeId();
  const onFencedOut = fencedOutHandler(options, nodeId);
  let member: { node: ClusterNode; database: PostgresDatabase } | undefined;
  let owner:
    | { node: ClusterNode; mayStillSend: () => Promise<boolean>; holdsLane: GatewayCluster["holdsLane"] }
    | undefined;
  return {
    nodeId,
    async guard(database) {
      const joined = await join(options, nodeId, database, onFencedOut);
      await checkRouting(joined, options, database);
      member = { node: joined, database };
      const lease = await takeWriter(joined, options, database);
      const guarded = fenced(database, joined);
      const { leaseTtlMs } = options.config.cluster;
      const holdsLane = ownerLaneClaims(guarded, joined.incarnation, leaseTtlMs, { logger: options.logger });
      owner = { node: joined, mayStillSend: writerSendGuard(joined, lease, options, onFencedOut), holdsLane };
      const fields = { nodeId, fence: lease.fence, address: advertisedAddress(options.config, options.port) };
      options.logger.info(fields, "holding the schema's writer lease: this gateway owns it");
      return guarded;
    },
    async owner() {
      if (!member) return undefined;
      const holder = await leaseHolder(member.database.pool, WRITER_LEASE);
      // This gateway holding the lease while it still serves as a standby (its core opens): no
      // owner to relay to, or it would relay to itself in a loop; the window answers 503.
      if (holder.owner === nodeId) return undefined;
      return holder.owner && holder.address ? { nodeId: holder.owner, address: holder.address } : undefined;
    },
    joined: () => member && { pool: member.database.pool, schema: member.database.schema, database: member.database },
    relaySecret: async () => {
      if (!member) throw new SwitchboardError("UNAVAILABLE", "the gateway has not joined its cluster yet");
      return readRelaySecret(member.database.pool);
    },
    mayStillSend: () => (owner ? owner.mayStillSend() : Promise.resolve(true)),
    holdsLane: (lane, sessionKey) => (owner ? owner.holdsLane(lane, sessionKey) : Promise.resolve(true)),
    ...accountLeases(() => owner?.node, options),
    status: async (opts) => (member ? member.node.status(opts) : { backend: "local", note: LOCAL_CLUSTER_NOTE }),
  };
}
