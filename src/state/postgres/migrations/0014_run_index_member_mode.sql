-- Two gaps of `cluster.owners: "many"` (docs/scale-out.md "N owners").

-- A run pending in an inbox of the schema, found by its run id: `agent.wait` on a partition core
-- (storedPendingRun, src/gateway/committed-reads.ts) and cron's wait for a run it forwarded
-- (handedOffRun, announceOfRun, src/cluster/run-results-sql.ts). Without these each read scanned
-- every inbox row of the schema. Only pending rows are indexed: a done row is never looked up so.
CREATE INDEX state_rows_inbox_pending_run ON state_rows ((value->>'runId'))
  WHERE tbl = 'inbox' AND value->>'status' = 'pending';
-- A stored turn's inbox row names its run `turn` (storedPendingRun reads both).
CREATE INDEX state_rows_inbox_pending_turn ON state_rows ((value->>'turn'))
  WHERE tbl = 'inbox' AND value->>'status' = 'pending';

-- Each member's `cluster.owners` ("one" or "many"): a gateway whose mode differs from a live
-- member's is refused at join (src/cluster/routing-check.ts). NULL: a gateway of a version before
-- this migration, which is not compared.
ALTER TABLE cluster_members ADD COLUMN owners text;
