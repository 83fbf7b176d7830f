-- Gateways sharing this schema (docs/scale-out.md). Every time here is the server's clock (now()),
-- never a gateway's, so gateways whose clocks disagree still agree on who holds what.

-- One row per running gateway; removed when it stops cleanly. A gateway is alive while the
-- session-level advisory lock `lock_key` is held by its liveness connection. `incarnation` names
-- this process (node id + random) and is what a lease's `owner` holds: a later process reusing the
-- node id never inherits a paused one's fences.
CREATE TABLE cluster_members (
  node_id text PRIMARY KEY,
  incarnation text NOT NULL UNIQUE,
  host text NOT NULL,
  pid integer NOT NULL,
  port integer NOT NULL,
  lock_key bigint NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- One row per lease, kept for ever once created so `fence` only ever rises: every takeover adds
-- one, and a write carrying an older fence is refused. A released lease expires at -infinity.
CREATE TABLE cluster_leases (
  name text PRIMARY KEY,
  owner text NOT NULL,
  fence bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now()
);

-- The heartbeat renews all of a gateway's leases in one statement.
CREATE INDEX cluster_leases_owner ON cluster_leases (owner);

-- Whether `node` (an incarnation, as a lease's owner) is a member whose liveness lock is held right now (an advisory lock on a bigint
-- key shows in pg_locks as classid = high 32 bits, objid = low 32 bits, objsubid = 1). A SIGKILLed
-- gateway's connection closes and its lock is gone within milliseconds. Only the exclusive lock
-- counts: a peer waiting on it takes a shared one for an instant.
CREATE FUNCTION cluster_node_alive(node text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
  SELECT EXISTS (
    SELECT 1
    FROM cluster_members m
    JOIN pg_locks l
      ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.mode = 'ExclusiveLock'
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND ((l.classid::bigint << 32) | l.objid::bigint) = m.lock_key
    WHERE m.incarnation = node
  )
$$;

-- The fence check a write statement carries inside itself (a fenced batch, docs/scale-out.md): locks
-- the lease row FOR SHARE while it is still `holder`'s (an incarnation) with fence `want`, so a
-- takeover (an UPDATE of the row) waits for the statement's transaction to end; else raises
-- SQLSTATE SBF01, which refuses the whole statement. A null lease (an unfenced database) checks nothing. True when it passes.
CREATE FUNCTION cluster_check_fence(lease text, holder text, want bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  IF lease IS NULL THEN
    RETURN true;
  END IF;
  PERFORM 1 FROM cluster_leases WHERE name = lease AND owner = holder AND fence = want FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'gateway % no longer holds lease "%" with fence %', holder, lease, want USING ERRCODE = 'SBF01';
  END IF;
  RETURN true;
END
$$;
