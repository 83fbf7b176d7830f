-- Inbound a gateway received and stored for the gateway that takes it in (docs/scale-out.md
-- "Inbound anywhere"): today a standby stores the hooks POSTed to it here and the schema's owner
-- drains them, woken by NOTIFY; with partitions the same table carries inbound for a session
-- another gateway owns. A row is stored (with its dedupe key) before its sender is answered, and
-- deleted only once the owner's own intake has it durably; its intake dedupes by the same key, so
-- a row drained twice (a crash between the two) is taken in once.
CREATE TABLE inbound_handoff (
  id bigserial PRIMARY KEY,
  -- what it is: 'hook' (a hook turn, its payload the stored turn) or 'telegram-update'
  kind text NOT NULL,
  -- the channel account it came in on ('' for a hook)
  account text NOT NULL DEFAULT '',
  -- the owner's dedupe key ('hook:<idempotency key>', ...): a second row with it is not stored
  dedupe_key text NOT NULL UNIQUE,
  -- the run id the receiving gateway answered with; the owner runs the turn under it
  run_id text,
  payload jsonb NOT NULL,
  -- the node id of the gateway that stored it
  received_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- the owner's failed intakes of it so far, and the last one's error (a bot not initialized yet,
  -- an account not running there, the store away): it is tried again at the owner's next pass
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  -- not drained before this (the server's clock): a failed intake puts it off with a backoff, so
  -- its attempts are spread over time and not spent by a burst of passes (one per NOTIFY or hook)
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- set only once it failed that many times AND is that old (src/cluster/handoff-sql.ts
  -- HANDOFF_SET_ASIDE, whatever the error): kept, never drained again, shown by `doctor`
  set_aside_at timestamptz,
  set_aside_reason text
);

-- The owner drains rows not set aside, oldest first.
CREATE INDEX inbound_handoff_waiting ON inbound_handoff (id) WHERE set_aside_at IS NULL;
