// For tests of `cluster.owners: "many"` (docs/scale-out.md "N owners"): when the partitions are
// split between the live gateways and each core is open on its share, and who holds which.
import { partOf } from "../../src/routing/partition.js";
import type { Cluster, ClusterGateway } from "./cluster-harness.js";
import { until } from "./gateway-child.js";

/** The partitions each live member holds, by node id, as the lease rows say. */
export async function partitionsByNode(cluster: Cluster): Promise<Map<string, number[]>> {
  const rows = await cluster.query<{ node_id: string; parts: number[] }>(
    `SELECT m.node_id, array_agg(substr(l.name, 11)::int ORDER BY substr(l.name, 11)::int) AS parts
       FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
      WHERE starts_with(l.name, 'partition:') AND l.expires_at > now() AND cluster_node_alive(l.owner)
      GROUP BY m.node_id ORDER BY m.node_id`,
  );
  return new Map(rows.map((row) => [row.node_id, row.parts]));
}

/** One "holding partitions" info line of a gateway of `cluster.owners: "many"` (src/gateway/many-cores.ts). */
export interface HoldingLine {
  change: "opened" | "adopted" | "evicted";
  moved?: string;
  cut?: boolean;
  count: number;
  parts: string;
  sessions: number;
  global: boolean;
  ms: number;
}

/** The gateway's "holding partitions" log lines, oldest first. */
export function holdingLines(gateway: ClusterGateway): HoldingLine[] {
  return gateway
    .stderr()
    .split("\n")
    .filter((line) => line.includes('"holding partitions"'))
    .map((line) => JSON.parse(line) as HoldingLine);
}

/** The partition count of the gateway's last "holding partitions" log line (its core open now). */
const openOn = (gateway: ClusterGateway): number | undefined => holdingLines(gateway).at(-1)?.count;

/** Waits until the `live` gateways (default all) hold the 256 partitions between them, each at most its share (`ceil(256 / live)`) with its core open on it; returns the split. */
export async function settledSplit(
  cluster: Cluster,
  live: ClusterGateway[] = cluster.gateways,
  timeoutMs = 60_000,
): Promise<Map<string, number[]>> {
  let split = new Map<string, number[]>();
  await until(async () => {
    split = await partitionsByNode(cluster);
    const total = [...split.values()].reduce((sum, parts) => sum + parts.length, 0);
    return (
      total === 256 &&
      split.size === live.length &&
      // At its share: a member still above it gives partitions up, and reopens its core, a moment later.
      [...split.values()].every((parts) => parts.length <= Math.ceil(256 / live.length)) &&
      live.every((g) => openOn(g) === split.get(g.name)?.length)
    );
  }, timeoutMs);
  return split;
}

/** A webchat session key (`<name>-<i>`) whose partition `holder` holds in `split`. */
export function sessionOn(split: Map<string, number[]>, holder: ClusterGateway, name: string): string {
  const held = new Set(split.get(holder.name));
  for (let i = 0; ; i++) {
    const key = `agent:main:webchat:dm:${name}-${i}`;
    if (held.has(partOf(key))) return key;
  }
}
