-- Durable run results (docs/scale-out.md "Durable run results", issue #28 step 3 of "The way there"):
-- how each agent run ended, written in the same commit as the turn's end (the row writer's batch
-- that carries its reply and transcript lines), so a gateway that did not run the turn (the one that
-- took the schema over after a SIGKILL) answers `agent.wait` for it. Pruned with the inbox's handled
-- keys (the same age).
CREATE TABLE run_results (
  run_id text PRIMARY KEY,
  session_key text NOT NULL,
  -- ok, error, timeout or aborted
  status text NOT NULL,
  -- the run's own final text (ok), or what went wrong
  text text,
  error text,
  queued_at timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz NOT NULL,
  -- the session's partition (step 1 of "The way there"); NULL for a run of no session
  part smallint
);
CREATE INDEX run_results_ended_at ON run_results (ended_at);

-- Every stored end wakes the gateways waiting for it: a NOTIFY on the schema's channel (channels are
-- database-wide, so it is named by a hash of the schema, as src/cluster/run-results-sql.ts names it)
-- with the run id, delivered when the writing transaction commits.
CREATE FUNCTION run_results_notify() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM pg_notify(
    'sb_runs_' || left(encode(sha256(convert_to('switchboard:runs:' || TG_TABLE_SCHEMA, 'UTF8')), 'hex'), 24),
    NEW.run_id
  );
  RETURN NULL;
END
$$;
CREATE TRIGGER run_results_notify AFTER INSERT OR UPDATE ON run_results
  FOR EACH ROW EXECUTE FUNCTION run_results_notify();
