-- The hand-off inbox's store in one round trip (docs/scale-out.md "Stored before it is answered",
-- src/cluster/handoff-sql.ts): a standby stored a row with BEGIN, the INSERT, a read of the owner's
-- inbox row, COMMIT, four round trips a post; this function does the same in one statement.
-- The INSERT skips a stored dedupe key ('duplicate': the first row's run id and payload). With
-- `inbox_cutoff` (ms since the epoch; null: no check), the owner's inbox row of the key is read
-- AFTER the INSERT: a VOLATILE function's statements each take a fresh snapshot under READ
-- COMMITTED, so a copy the INSERT did not meet (the owner deleted it in its intake's commit) is
-- seen there. A row the inbox knows (a run id, and not a key handled before the cutoff) is taken
-- back ('taken', with the inbox row): nothing stays stored, nobody is woken. Otherwise the owner is
-- woken (NOTIFY on `channel`, sent at the commit) and the row is 'new'.
CREATE FUNCTION handoff_store(
  p_kind text, p_account text, p_key text, p_run_id text, p_payload jsonb, p_received_by text,
  p_channel text, p_inbox_cutoff double precision)
RETURNS TABLE (status text, run_id text, payload jsonb, inbox jsonb)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  stored_id bigint;
  known jsonb;
BEGIN
  INSERT INTO inbound_handoff (kind, account, dedupe_key, run_id, payload, received_by)
  VALUES (p_kind, p_account, p_key, p_run_id, p_payload, p_received_by)
  ON CONFLICT (dedupe_key) DO NOTHING RETURNING id INTO stored_id;
  IF stored_id IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, h.run_id, h.payload, NULL::jsonb
      FROM inbound_handoff h WHERE h.dedupe_key = p_key;
    IF NOT FOUND THEN
      -- Taken in between the two statements: the owner's inbox has it now (the caller reads it there).
      RETURN QUERY SELECT 'duplicate'::text, NULL::text, NULL::jsonb, NULL::jsonb;
    END IF;
    RETURN;
  END IF;
  IF p_inbox_cutoff IS NOT NULL THEN
    SELECT r.value INTO known FROM state_rows r WHERE r.tbl = 'inbox' AND r.key = p_key;
    IF known->>'runId' IS NOT NULL AND (known->>'status' IS DISTINCT FROM 'done' OR known->>'at' IS NULL
        OR (known->>'at')::float8 >= p_inbox_cutoff) THEN
      DELETE FROM inbound_handoff WHERE id = stored_id;
      RETURN QUERY SELECT 'taken'::text, NULL::text, NULL::jsonb, known;
      RETURN;
    END IF;
  END IF;
  PERFORM pg_notify(p_channel, '');
  RETURN QUERY SELECT 'new'::text, p_run_id, p_payload, NULL::jsonb;
END
$$;
