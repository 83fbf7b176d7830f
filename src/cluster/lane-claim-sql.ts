// The statement that claims send lanes (migration 0012_outbox_lanes.sql; docs/scale-out.md "Sends
// claimed per chat lane"). Every time compared is the server's (now()).
import type pg from "pg";
import type { CarriedFence } from "../state/postgres/database.js";

/** A lane this gateway holds: sends to it go out from here until the claim is lost. */
export interface LaneClaim {
  lane: string;
  /** the row's takeover counter: how often the lane changed hands (shown, never read to decide a send) */
  fence: number;
}

/**
 * Takes or renews the lanes in ONE upsert whose filter first checks `fence` (the sending sessions'
 * partition leases and the writer lease: `cluster_check_fences`, SBF01 when stale; null checks
 * nothing). A lane is taken when it is new, this holder's (its fence kept), past its `until`, or
 * held by a gateway that owns no lease any more (taken over or released): then its takeover
 * counter (`fence`) rises by one. A holder that still owns its leases loses the lane only past its
 * `until`, when it no longer sends to it (lane-claims.ts: a claim is used while young). Lanes in name order, as every claim locks them (two claims never wait in a circle).
 */
const CLAIM = `
INSERT INTO outbox_lanes AS o (lane, holder, fence, until)
SELECT lane, $2, 1, now() + $3 * interval '1 millisecond' FROM unnest($1::text[]) AS w(lane)
WHERE (SELECT cluster_check_fences($4::text[], $2::text, $5::bigint[]))
ORDER BY lane
ON CONFLICT (lane) DO UPDATE SET
  fence = CASE WHEN o.holder = excluded.holder THEN o.fence ELSE o.fence + 1 END,
  taken_at = CASE WHEN o.holder = excluded.holder THEN o.taken_at ELSE now() END,
  holder = excluded.holder, until = excluded.until
WHERE o.holder = excluded.holder OR o.until <= now()
  OR NOT EXISTS (SELECT 1 FROM cluster_leases l WHERE l.owner = o.holder AND l.expires_at > '-infinity')
RETURNING lane, fence`;

/**
 * Claims `lanes` for `holder` (an incarnation) for `ttlMs`, in one statement checking `fence`
 * inside it. Returns the lanes now held, with their fences; a lane missing is another live
 * gateway's. Throws SBF01 (isFenceRefusal) when the fence is stale: nothing is claimed.
 */
export async function claimLanes(
  client: pg.ClientBase | pg.Pool,
  lanes: readonly string[],
  holder: string,
  ttlMs: number,
  fence: CarriedFence | undefined,
): Promise<LaneClaim[]> {
  const sorted = [...new Set(lanes)].sort();
  const { rows } = await client.query<{ lane: string; fence: string }>(CLAIM, [
    sorted,
    holder,
    ttlMs,
    fence?.leases ?? null,
    fence?.fences ?? null,
  ]);
  return rows.map((row) => ({ lane: row.lane, fence: Number(row.fence) }));
}

/**
 * Deletes the lane rows whose `until` passed more than `pastMs` ago; how many. Safe at any time: a
 * lane past its `until` is free with or without its row (only its takeover counter restarts). The
 * rows are locked in name order, as a claim locks them, and a row a claim holds is skipped (left for
 * the next prune): a prune never waits on a claim, so the two cannot deadlock.
 */
export async function pruneLanes(client: pg.ClientBase | pg.Pool, pastMs: number): Promise<number> {
  const { rowCount } = await client.query(
    `DELETE FROM outbox_lanes WHERE lane IN (
       SELECT lane FROM outbox_lanes WHERE until < now() - $1 * interval '1 millisecond'
       ORDER BY lane FOR UPDATE SKIP LOCKED)`,
    [pastMs],
  );
  return rowCount ?? 0;
}

/**
 * Ends `holder`'s claims on `lanes` ("all": every lane it holds) now: their `until` becomes the
 * server's now(), so another gateway takes them at once (its takeover counter rising by one). Only
 * the holder's own rows still running change; their fences stay. The rows are locked in name order,
 * as a claim locks them, so a release and a claim cannot wait on each other in a circle. How many.
 */
export async function releaseLanes(
  client: pg.ClientBase | pg.Pool,
  lanes: readonly string[] | "all",
  holder: string,
): Promise<number> {
  const { rowCount } = await client.query(
    `UPDATE outbox_lanes SET until = now() WHERE holder = $1 AND lane IN (
       SELECT lane FROM outbox_lanes WHERE holder = $1 AND until > now() AND ($2::text[] IS NULL OR lane = ANY($2))
       ORDER BY lane FOR UPDATE)`,
    [holder, lanes === "all" ? null : [...new Set(lanes)]],
  );
  return rowCount ?? 0;
}
