// The gateway's place in its schema's cluster with `cluster.owners: "many"` (docs/scale-out.md "N
// owners"): it joins once, for every core it opens in turn; its partition share runs on the member;
// it waits for the writer lease in the background and, holding it, is the global holder (channel
// accounts, cron, sweeps, clients). Losing any lease stops the process, as with one owner.
import type { ClusterNode } from "../cluster/cluster-node.js";
import type { LaneClaims } from "../cluster/lane-claims.js";
import { WRITER_LEASE, leaseOfPart } from "../cluster/cluster-status.js";
import { leaseHolder } from "../cluster/lease-sql.js";
import { processNodeId } from "../cluster/node-id.js";
import { readRelaySecret } from "../cluster/relay-secret.js";
import { createSendGuard, leaseYoung } from "../cluster/send-guard.js";
import { SwitchboardError } from "../errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import {
  type GatewayCluster,
  type GatewayClusterOptions,
  type OnLost,
  accountLeases,
  advertisedAddress,
  checkRouting,
  fencedOutHandler,
  join,
} from "./core-cluster.js";
import { fenced } from "./fenced-database.js";
import { ownerLaneClaims } from "./owner-lane-claims.js";

/** A member of `cluster.owners: "many"`. */
export interface ManyCluster extends GatewayCluster {
  /** the member (after `guard` joined) */
  node(): ClusterNode;
  /** the partitions the share holds now (the send guard reads their leases) */
  heldBy(held: () => ReadonlySet<number>): void;
  /** Takes the writer lease if it is free now (a cold start opens the global core at once); false when another holds it. */
  tryGlobal(): Promise<boolean>;
  /** Waits for the writer lease (at once when free, else when its holder goes); rejects once the signal aborts. */
  takeGlobal(): Promise<void>;
  /** whether this gateway holds the writer lease: the global holder */
  global(): boolean;
  /** the database a core writes through: fenced as the global holder's or a partition core's (`fenced`'s `global`) */
  fencedFor(global: boolean): PostgresDatabase;
  /** A lane's queue emptied on this gateway: its claim is released (batched), so a peer's next send to that chat does not wait. */
  laneEmptied(lane: string): void;
  /** The core stopped: every lane claim of this gateway released in one statement (before its partitions go). */
  releaseLanes(): Promise<void>;
  /** whether the member's leases are young now (no round trip): false after a pause, until a renewal */
  leasesYoung(): boolean;
}

interface Member {
  node: ClusterNode;
  database: PostgresDatabase;
  /** the database a partition core writes through: each write fenced by the leases of the partitions it touches; its close leaves */
  guarded: PostgresDatabase;
  /** the global holder's (rows of no session too) */
  guardedGlobal: PostgresDatabase;
  /** the process's lane claims, for every core it opens in turn; each core's stop releases them all */
  holdsLane: LaneClaims;
}

/** When the member's leases were last renewed (all renew in one statement): its first partition's, else the writer lease's. */
function renewedAtOf(member: Member | undefined, held: ReadonlySet<number>): number | undefined {
  if (!member) return undefined;
  const first = held.values().next();
  return member.node.renewedAt(first.done ? WRITER_LEASE : leaseOfPart(first.value));
}

/** Before every platform send: the member's leases are young (all renew in one statement), or a renewal proves them. */
function memberSendGuard(
  member: () => Member | undefined,
  held: () => ReadonlySet<number>,
  options: GatewayClusterOptions,
  onLost: OnLost,
) {
  const renewedAt = () => renewedAtOf(member(), held());
  return createSendGuard({
    renewedAt,
    renewNow: async () => {
      await member()?.node.renewNow();
      return renewedAt() !== undefined;
    },
    leaseTtlMs: options.config.cluster.leaseTtlMs,
    onLost: () => {
      options.logger.error({}, "this gateway's leases are older than their TTL (it was paused); sending nothing");
      onLost({ name: WRITER_LEASE, fence: 0 });
    },
  });
}

/** Joins (once) and checks the routing config; the member's fenced database and lane claims. */
async function joinOnce(options: GatewayClusterOptions, nodeId: string, database: PostgresDatabase, onLost: OnLost) {
  const node = await join(options, nodeId, database, onLost);
  await checkRouting(node, options, database);
  // SEAM (task `fences`): the fences' `{ global }` (the stand-in in ./fenced-database.ts treats both alike).
  const guarded = fenced(database, node, { global: false });
  const guardedGlobal = fenced(database, node, { global: true });
  const holdsLane = ownerLaneClaims(guarded, node.incarnation, options.config.cluster.leaseTtlMs, {
    logger: options.logger,
    releaseOn: database,
  });
  return { node, database, guarded, guardedGlobal, holdsLane };
}

/** The member's wait for the writer lease (`now`: only if it is free); a holder found is announced as the owner to relay to. */
async function waitForGlobal(member: Member, options: GatewayClusterOptions, nodeId: string, now = false) {
  const taken = await member.node.acquire(WRITER_LEASE);
  if (!("lease" in taken) && now) return false;
  const { holder } = "holder" in taken ? taken : { holder: undefined };
  if (holder?.owner && holder.owner !== nodeId && holder.address)
    options.onStandby?.({ nodeId: holder.owner, address: holder.address });
  const lease = "lease" in taken ? taken.lease : await member.node.acquireWhenFree(WRITER_LEASE, options.signal);
  const fields = { nodeId, fence: lease.fence, address: advertisedAddress(options.config, options.port) };
  options.logger.info(fields, "holding the schema's writer lease: this gateway is the global holder");
  return true;
}

/** The membership of a gateway with `cluster.owners: "many"`; `guard` joins and returns the fenced database. */
export function createManyCluster(options: GatewayClusterOptions): ManyCluster {
  const nodeId = options.config.gateway.nodeId ?? processNodeId();
  const onLost = fencedOutHandler(options, nodeId);
  let member: Member | undefined;
  let held: () => ReadonlySet<number> = () => new Set();
  let global = false;
  const joined = () => {
    if (!member) throw new SwitchboardError("UNAVAILABLE", "the gateway has not joined its cluster yet");
    return member;
  };
  return {
    nodeId,
    async guard(database) {
      member ??= await joinOnce(options, nodeId, database, onLost);
      return member.guarded;
    },
    node: () => joined().node,
    heldBy(read) {
      held = read;
    },
    async tryGlobal() {
      global ||= await waitForGlobal(joined(), options, nodeId, true);
      return global;
    },
    async takeGlobal() {
      if (global) return;
      await waitForGlobal(joined(), options, nodeId);
      global = true;
    },
    global: () => global,
    fencedFor: (asGlobal) => (asGlobal ? joined().guardedGlobal : joined().guarded),
    leasesYoung: () => leaseYoung(renewedAtOf(member, held()), options.config.cluster.leaseTtlMs),
    async owner() {
      if (!member) return undefined;
      const holder = await leaseHolder(member.database.pool, WRITER_LEASE);
      if (holder.owner === nodeId) return undefined;
      return holder.owner && holder.address ? { nodeId: holder.owner, address: holder.address } : undefined;
    },
    joined: () => member && { pool: member.database.pool, schema: member.database.schema, database: member.database },
    relaySecret: async () => readRelaySecret(joined().database.pool),
    mayStillSend: memberSendGuard(
      () => member,
      () => held(),
      options,
      onLost,
    ),
    holdsLane: (lane, sessionKey) => joined().holdsLane(lane, sessionKey),
    laneEmptied: (lane) => member?.holdsLane.release(lane),
    releaseLanes: async () => member?.holdsLane.releaseAll(),
    ...accountLeases(() => (global ? member?.node : undefined), options),
    status: (opts) => joined().node.status(opts),
  };
}
