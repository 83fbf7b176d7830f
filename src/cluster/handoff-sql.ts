// The hand-off inbox (migration 0006, docs/scale-out.md "Inbound anywhere"): inbound a gateway
// stored for the gateway that takes it in. The receiver stores a row and wakes the owner in one
// transaction (INSERT .. ON CONFLICT on the dedupe key, then NOTIFY); the owner reads the rows
// oldest first, takes each in through its own intake and deletes it in the commit that stores that
// intake (the row writer's batch, src/state/postgres/batch-sql.ts), or sets it aside.
import type pg from "pg";
import { schemaChannel } from "./listen-channel.js";

/**
 * What a hand-off row carries: `hook` (a hook turn), `chat-send` (a gateway client's message),
 * `<channel>-update` (a platform event for its account, e.g. `telegram-update`), or `inbox-entry`
 * (an inbox entry for a session of a partition another gateway holds, with its part: migration 0013).
 */
export type HandoffKind = "hook" | "chat-send" | "inbox-entry" | `${string}-update`;

/** Thrown by an owner's intake for a row it cannot read: a failure like any other (set aside after {@link HANDOFF_SET_ASIDE}). */
export class PoisonHandoffError extends Error {
  override name = "PoisonHandoffError";
}

/** A row to store. */
export interface HandoffInput {
  kind: HandoffKind;
  /** the channel account it came in on ("" for a hook) */
  account?: string;
  /** the dedupe key the owner's intake uses (`hook:<idempotency key>`, ...) */
  dedupeKey: string;
  /** the run id the receiver promised its sender */
  runId?: string;
  payload: unknown;
  /** the node id of the gateway storing it */
  receivedBy: string;
  /** the partition of its session (an `inbox-entry`): its holder drains it; none: the global holder does */
  part?: number | undefined;
}

/** A stored row, as the owner drains it. */
export interface HandoffRow {
  id: string;
  kind: string;
  account: string;
  dedupeKey: string;
  runId: string | undefined;
  payload: unknown;
  /** the node id of the gateway that stored it */
  receivedBy: string;
  /** how long ago it was committed when read (the server's clock): the owner's wake-up delay */
  ageMs: number;
  /**
   * The partition of the session it is for (a forwarded inbox entry, docs/scale-out.md step 7);
   * absent or null: a row of no session, the global holder's. Its delete and its failures are
   * fenced by that partition's lease (null: the writer lease).
   */
  part?: number | null;
}

/** What storing found: a new row, or one already stored under its dedupe key (its run id is the first one's). */
export interface HandoffStored {
  status: "new" | "duplicate";
  runId: string | undefined;
  payload: unknown;
}

/** The NOTIFY channel of `schema`'s hand-off inbox. */
export const handoffChannel = (schema: string): string => schemaChannel("handoff", schema);

/**
 * Stores `row` unless its dedupe key is stored already, and wakes the owner: one statement, the
 * function `handoff_store` (migration 0011); settles once committed. A repeat of the key stores
 * nothing and answers the first row's run id. With `inboxCutoffMs`, the owner's inbox row of the key
 * is read after the INSERT (a fresh snapshot): when the owner knows the key (handled at or after the
 * cutoff, or pending) nothing is stored and that row is returned (status `taken`).
 */
export async function storeHandoff(
  pool: pg.Pool,
  schema: string,
  row: HandoffInput,
  inboxCutoffMs?: number,
): Promise<HandoffStored | { status: "taken"; inbox: unknown }> {
  const { rows } = await pool.query<{ status: string; run_id: string | null; payload: unknown; inbox: unknown }>(
    "SELECT status, run_id, payload, inbox FROM handoff_store($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::smallint)",
    [
      row.kind,
      row.account ?? "",
      row.dedupeKey,
      row.runId ?? null,
      JSON.stringify(row.payload),
      row.receivedBy,
      handoffChannel(schema),
      inboxCutoffMs ?? null,
      row.part ?? null,
    ],
  );
  const found = rows[0];
  if (found?.status === "taken") return { status: "taken", inbox: found.inbox };
  if (found?.status === "new") return { status: "new", runId: row.runId, payload: row.payload };
  return { status: "duplicate", runId: found?.run_id ?? undefined, payload: found?.payload };
}

/** The owners' inbox row under `dedupeKey` (its JSON value), read from the schema's state rows; undefined when none is stored. */
export async function inboxRowOf(pool: pg.Pool, dedupeKey: string): Promise<unknown> {
  const { rows } = await pool.query<{ value: unknown }>(
    "SELECT value FROM state_rows WHERE tbl = 'inbox' AND key = $1",
    [dedupeKey],
  );
  return rows[0]?.value;
}

/**
 * When a row that keeps failing is set aside: after this many failed intakes AND once this old,
 * whatever the error. Both, so that neither a burst of passes (a NOTIFY per hook) nor one long
 * outage alone sets aside a row its sender was already answered for (docs/scale-out.md).
 */
export const HANDOFF_SET_ASIDE = { attempts: 10, minAgeMs: 10 * 60_000 };

/**
 * How long a failed row is put off: `firstMs` after its first failure, doubling, at most `maxMs`
 * (1 s, 2 s, ... 60 s: ten attempts take about four minutes whatever the pace of passes).
 */
export const HANDOFF_BACKOFF = { firstMs: 1_000, maxMs: 60_000 };

/** Which rows a gateway drains: those of partitions `parts`, and those of no part when it is the `global` holder. */
export interface HandoffScope {
  parts: readonly number[];
  global: boolean;
}

/**
 * The rows waiting (not set aside) and due after id `after`, oldest first, at most `limit`;
 * `fresh`: only rows never tried yet (the pass an owner's own inbound waits for); `scope`: only
 * those rows (none: every row, the one owner's drain).
 */
export async function waitingHandoffs(
  pool: pg.Pool,
  limit = 100,
  after = "0",
  fresh = false,
  scope?: HandoffScope,
): Promise<HandoffRow[]> {
  const { rows } = await pool.query<{
    id: string;
    kind: string;
    account: string;
    dedupe_key: string;
    run_id: string | null;
    payload: unknown;
    received_by: string;
    part: number | null;
    age_ms: number;
  }>(
    `SELECT id, kind, account, dedupe_key, run_id, payload, received_by, part,
            (extract(epoch FROM clock_timestamp() - created_at) * 1000)::float8 AS age_ms
       FROM inbound_handoff
      WHERE set_aside_at IS NULL AND id > $2::bigint AND next_attempt_at <= clock_timestamp()
        AND (NOT $3 OR attempts = 0)
        AND ($4::smallint[] IS NULL OR part = ANY($4::smallint[]) OR ($5 AND part IS NULL))
      ORDER BY id LIMIT $1`,
    [limit, after, fresh, scope ? [...scope.parts] : null, scope?.global ?? true],
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    account: r.account,
    dedupeKey: r.dedupe_key,
    runId: r.run_id ?? undefined,
    payload: r.payload,
    receivedBy: r.received_by,
    part: r.part,
    ageMs: r.age_ms,
  }));
}

/** What {@link recordHandoffFailure} found: the row's failed intakes so far, and whether it is set aside now. */
export interface HandoffFailure {
  attempts: number;
  setAside: boolean;
}

/**
 * Counts one failed intake of a row with its error and puts it off by `backoff` (none: due at
 * once); sets the row aside (never drained again) once it failed `limit.attempts` times and is at
 * least `limit.minAgeMs` old.
 */
export async function recordHandoffFailure(
  client: pg.PoolClient,
  id: string,
  error: string,
  limit = HANDOFF_SET_ASIDE,
  backoff?: typeof HANDOFF_BACKOFF,
): Promise<HandoffFailure> {
  const { rows } = await client.query<{ attempts: number; aside: boolean }>(
    `WITH due AS (
       SELECT attempts + 1 >= $3 AND created_at <= now() - make_interval(secs => $4 / 1000.0) AS aside,
              least($5 * power(2, least(attempts, 30)), $6) AS delay_ms
         FROM inbound_handoff WHERE id = $1)
     UPDATE inbound_handoff SET attempts = attempts + 1, last_error = $2,
            next_attempt_at = now() + make_interval(secs => due.delay_ms / 1000.0),
            set_aside_at = CASE WHEN due.aside THEN now() END,
            set_aside_reason = CASE WHEN due.aside THEN $2 END
       FROM due WHERE id = $1 RETURNING attempts, set_aside_at IS NOT NULL AS aside`,
    [id, error, limit.attempts, limit.minAgeMs, backoff?.firstMs ?? 0, backoff?.maxMs ?? 0],
  );
  const row = rows[0];
  return { attempts: row?.attempts ?? 0, setAside: row?.aside ?? false };
}

/** A row set aside, as `doctor` names it. */
export interface SetAsideHandoff {
  id: string;
  kind: string;
  account: string;
  dedupeKey: string;
  attempts: number;
  reason: string;
  setAsideAt: string;
}

/** The rows set aside, oldest first. */
export async function setAsideHandoffs(pool: pg.Pool): Promise<SetAsideHandoff[]> {
  const { rows } = await pool.query<{
    id: string;
    kind: string;
    account: string;
    dedupe_key: string;
    attempts: number;
    reason: string | null;
    set_aside_at: Date;
  }>(
    `SELECT id, kind, account, dedupe_key, attempts, set_aside_reason AS reason, set_aside_at
       FROM inbound_handoff WHERE set_aside_at IS NOT NULL ORDER BY id`,
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    account: r.account,
    dedupeKey: r.dedupe_key,
    attempts: r.attempts,
    reason: r.reason ?? "",
    setAsideAt: r.set_aside_at.toISOString(),
  }));
}
