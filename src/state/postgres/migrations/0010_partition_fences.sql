-- A fence per partition (docs/scale-out.md "The way there", step 2): the owner holds a lease
-- `partition:<n>` for each of the schema's partitions besides `schema:writer`, and each write carries
-- the fences of the partitions it touches (the writer lease for rows of no session: cron, pairing,
-- channels). This checks many leases at once, inside the writing statement.

-- Locks the rows of leases `names` FOR SHARE in name order (every checker and every batch acquire
-- goes in that order, so two of them never wait on each other in a circle), then checks each is
-- still `holder`'s (an incarnation) with the fence at the same place in `wants`. A takeover (an
-- UPDATE of a row) waits for the checking transaction to end. A stale one raises SQLSTATE SBF01
-- naming the first such lease in the message and, alone, in DETAIL (the gateway reads it there).
-- Null `names` (an unfenced database) checks nothing. True when every lease passes.
CREATE FUNCTION cluster_check_fences(names text[], holder text, wants bigint[]) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  stale text;
  want bigint;
BEGIN
  IF names IS NULL THEN
    RETURN true;
  END IF;
  PERFORM 1 FROM cluster_leases WHERE name = ANY(names) ORDER BY name FOR SHARE;
  SELECT w.name, w.fence INTO stale, want
  FROM unnest(names, wants) AS w(name, fence)
  WHERE NOT EXISTS (SELECT 1 FROM cluster_leases l WHERE l.name = w.name AND l.owner = holder AND l.fence = w.fence)
  ORDER BY w.name LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'gateway % no longer holds lease "%" with fence %', holder, stale, want
      USING ERRCODE = 'SBF01', DETAIL = stale;
  END IF;
  RETURN true;
END
$$;
