-- Hand-off rows for a partition's owner (docs/scale-out.md "Inbound anywhere", step 7): with
-- `cluster.owners: "many"` a gateway that takes in an inbox entry for a session of a partition it
-- does not hold stores it here as a row of kind 'inbox-entry' carrying that partition; the gateway
-- holding the partition drains the rows of its partitions. The rows stored so far (hooks,
-- chat-send, '<channel>-update') keep no part: the global holder (the lease schema:writer) drains them.
ALTER TABLE inbound_handoff ADD COLUMN part smallint;

-- A key is stored at most once without a part and once with one: the global holder draining a
-- hook row 'hook:X' forwards its entry under the same key to the partition's holder, and the
-- forward must be stored while the hook row still waits (it is deleted once the forward is stored).
ALTER TABLE inbound_handoff DROP CONSTRAINT inbound_handoff_dedupe_key_key;
CREATE UNIQUE INDEX inbound_handoff_key ON inbound_handoff (dedupe_key, (part IS NULL));

-- A partition owner drains the waiting rows of its partitions, oldest first.
CREATE INDEX inbound_handoff_part_waiting ON inbound_handoff (part, id) WHERE set_aside_at IS NULL;

-- handoff_store (migration 0011) with the row's part. A row without a part whose key is stored
-- with one (forwarded already) is a duplicate of that row. The NOTIFY payload is the part ('' for
-- none): one channel for the schema, each gateway drains only for a part it holds (or '' when it
-- is the global holder), so a forward wakes its holder and the others drop it in memory.
CREATE FUNCTION handoff_store(
  p_kind text, p_account text, p_key text, p_run_id text, p_payload jsonb, p_received_by text,
  p_channel text, p_inbox_cutoff double precision, p_part smallint)
RETURNS TABLE (status text, run_id text, payload jsonb, inbox jsonb)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  stored_id bigint;
  known jsonb;
BEGIN
  IF p_part IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, h.run_id, h.payload, NULL::jsonb
      FROM inbound_handoff h WHERE h.dedupe_key = p_key AND h.part IS NOT NULL LIMIT 1;
    IF FOUND THEN RETURN; END IF;
  END IF;
  INSERT INTO inbound_handoff (kind, account, dedupe_key, run_id, payload, received_by, part)
  VALUES (p_kind, p_account, p_key, p_run_id, p_payload, p_received_by, p_part)
  ON CONFLICT (dedupe_key, (part IS NULL)) DO NOTHING RETURNING id INTO stored_id;
  IF stored_id IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, h.run_id, h.payload, NULL::jsonb
      FROM inbound_handoff h WHERE h.dedupe_key = p_key AND (h.part IS NULL) = (p_part IS NULL);
    IF NOT FOUND THEN
      -- Taken in between the two statements: the owner's inbox has it now (the caller reads it there).
      RETURN QUERY SELECT 'duplicate'::text, NULL::text, NULL::jsonb, NULL::jsonb;
    END IF;
    RETURN;
  END IF;
  IF p_inbox_cutoff IS NOT NULL THEN
    SELECT r.value INTO known FROM state_rows r WHERE r.tbl = 'inbox' AND r.key = p_key;
    -- A forward (a part) is also taken back for a handled message, whose row names no run.
    IF (known->>'runId' IS NOT NULL OR (known IS NOT NULL AND p_part IS NOT NULL))
        AND (known->>'status' IS DISTINCT FROM 'done' OR known->>'at' IS NULL
        OR (known->>'at')::float8 >= p_inbox_cutoff) THEN
      DELETE FROM inbound_handoff WHERE id = stored_id;
      RETURN QUERY SELECT 'taken'::text, NULL::text, NULL::jsonb, known;
      RETURN;
    END IF;
  END IF;
  PERFORM pg_notify(p_channel, coalesce(p_part::text, ''));
  RETURN QUERY SELECT 'new'::text, p_run_id, p_payload, NULL::jsonb;
END
$$;

-- The 0011 signature (a gateway of the version before, during a rolling upgrade): a row of no part.
CREATE OR REPLACE FUNCTION handoff_store(
  p_kind text, p_account text, p_key text, p_run_id text, p_payload jsonb, p_received_by text,
  p_channel text, p_inbox_cutoff double precision)
RETURNS TABLE (status text, run_id text, payload jsonb, inbox jsonb)
LANGUAGE sql VOLATILE
SET search_path FROM CURRENT
AS $$
  SELECT * FROM handoff_store(p_kind, p_account, p_key, p_run_id, p_payload, p_received_by, p_channel,
    p_inbox_cutoff, NULL::smallint)
$$;
