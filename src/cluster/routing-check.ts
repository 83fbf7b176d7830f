// One routing config per schema (docs/scale-out.md "One routing config per schema"): a joining
// gateway compares its routing settings (src/routing/routing-settings.ts) with those stored in
// `cluster_settings` (row `routing`, the first gateway's) and with each live member's (rows
// `routing@<incarnation>`), in one transaction that locks the `routing` row, so joins take turns.
// A config that differs from a live member's is refused; one that differs only from the stored row
// (every gateway that had it is gone) replaces it: that is how an operator changes it on purpose.
// The same transaction compares the gateway's `cluster.owners` with each live member's (their
// member rows' `owners`, migration 0014): one schema runs one mode.
import type pg from "pg";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  ROUTING_SETTING_NAMES,
  type RoutingSettings,
  describeDifference,
  routingDifferences,
} from "../routing/routing-settings.js";

/** What the joining gateway checks against: the schema's stored settings and each live member's. */
interface Seen {
  stored: unknown;
  /** `owners`: the member's `cluster.owners`, null for a gateway of a version before migration 0014 */
  live: Array<{ nodeId: string; settings: unknown; owners: string | null }>;
}

/** The refusal of a gateway whose `cluster.owners` differs from a live member's. */
function ownersRefused(schema: string, mine: string, other: Seen["live"][number]): SwitchboardError {
  return new SwitchboardError(
    "CONFIG_INVALID",
    `this gateway's cluster.owners is "${mine}", but gateway ${other.nodeId}, running on PostgreSQL schema "${schema}", runs "${other.owners}". ` +
      'Every gateway on one schema needs the same cluster.owners (a "one" gateway beside "many" ones would wait for every partition at once): ' +
      `set cluster.owners to "${other.owners}" here, or to change the mode stop every gateway on the schema and start them all with the new one (docs/scale-out.md)`,
  );
}

/** The refusal of a gateway whose routing config differs from a live member's. */
function routingRefused(schema: string, mine: RoutingSettings, other: Seen["live"][number]): SwitchboardError {
  const differences = routingDifferences(mine, other.settings).map((name) =>
    describeDifference(name, mine, other.settings),
  );
  return new SwitchboardError(
    "CONFIG_INVALID",
    `this gateway's routing config differs from that of gateway ${other.nodeId}, running on PostgreSQL schema "${schema}": ` +
      `${differences.join("; ")}. Every gateway on one schema needs the same routing config ` +
      `(${ROUTING_SETTING_NAMES.join(", ")}), or one chat would get a different session on each: ` +
      "give this gateway the same settings, or to change them stop every gateway on the schema and start them with the new ones (docs/scale-out.md)",
  );
}

/** Reads the stored settings (created as `mine` when absent) with the row locked, and every other live member's. */
async function readSeen(client: pg.ClientBase, incarnation: string, mine: string): Promise<Seen> {
  await client.query("INSERT INTO cluster_settings (name, value) VALUES ('routing', $1) ON CONFLICT DO NOTHING", [
    mine,
  ]);
  const stored = await client.query<{ value: string }>(
    "SELECT value FROM cluster_settings WHERE name = 'routing' FOR UPDATE",
  );
  // A member with no row of its own has not checked yet (it will, after this transaction) or runs a version that does not.
  const live = await client.query<{ node_id: string; value: string; owners: string | null }>(
    `SELECT m.node_id, m.owners, s.value FROM cluster_members m JOIN cluster_settings s ON s.name = 'routing@' || m.incarnation
     WHERE m.incarnation <> $1 AND cluster_node_alive(m.incarnation) ORDER BY m.node_id`,
    [incarnation],
  );
  return {
    stored: parsed(stored.rows[0]!.value),
    live: live.rows.map((row) => ({ nodeId: row.node_id, settings: parsed(row.value), owners: row.owners })),
  };
}

/** A stored value as JSON; one that is not (written by hand) differs in every setting, so it is named, not thrown. */
function parsed(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** Records `mine` as the schema's and this member's settings; forgets the rows of members that are gone. */
async function record(client: pg.ClientBase, incarnation: string, mine: string, replace: boolean): Promise<void> {
  if (replace) await client.query("UPDATE cluster_settings SET value = $1 WHERE name = 'routing'", [mine]);
  await client.query(
    `INSERT INTO cluster_settings (name, value) VALUES ('routing@' || $1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    [incarnation, mine],
  );
  await client.query(
    `DELETE FROM cluster_settings s WHERE s.name LIKE 'routing@%'
     AND NOT EXISTS (SELECT 1 FROM cluster_members m WHERE 'routing@' || m.incarnation = s.name)`,
  );
}

/** Options of {@link checkRoutingConfig}. */
export interface RoutingCheckOptions {
  pool: pg.Pool;
  schema: string;
  /** the joining member (already a member: its liveness lock held, so a later joiner sees it) */
  incarnation: string;
  settings: RoutingSettings;
  /** this gateway's `cluster.owners`; a live member of another mode refuses it (left out: not compared) */
  owners?: "one" | "many";
  logger: Logger;
}

/**
 * Refuses (CONFIG_INVALID, naming each differing setting and the fix) a gateway whose routing
 * settings or `cluster.owners` differ from a live member's; stores them as the schema's when they differ only from the
 * stored ones (a change made with every gateway stopped, logged as a warning).
 */
export async function checkRoutingConfig(options: RoutingCheckOptions): Promise<void> {
  const { settings, incarnation } = options;
  const mine = JSON.stringify(settings);
  const client = await options.pool.connect();
  try {
    await client.query("BEGIN");
    const seen = await readSeen(client, incarnation, mine);
    const { owners } = options;
    const otherMode = seen.live.find((other) => owners && other.owners && other.owners !== owners);
    if (owners && otherMode) throw ownersRefused(options.schema, owners, otherMode);
    const differing = seen.live.find((other) => routingDifferences(settings, other.settings).length > 0);
    if (differing) throw routingRefused(options.schema, settings, differing);
    const changed = routingDifferences(settings, seen.stored);
    await record(client, incarnation, mine, changed.length > 0);
    await client.query("COMMIT");
    if (changed.length > 0)
      options.logger.warn(
        {
          schema: options.schema,
          changed: changed.map((name) => describeDifference(name, settings, seen.stored, "before")),
        },
        "the schema's routing config changed (no running gateway had the old one): chats may map to other sessions from now on",
      );
  } catch (err) {
    // A connection that cannot roll back is broken: it leaves the pool rather than going back to it.
    const broken = await client.query("ROLLBACK").then(
      () => undefined,
      (rollback: unknown) => rollback as Error,
    );
    client.release(broken);
    throw err;
  }
  client.release();
}
