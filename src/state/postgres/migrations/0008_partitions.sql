-- Partitions (docs/scale-out.md "The way there", step 1): every per-session row says which of the
-- schema's partitions its session belongs to, `partOf(session key)` (src/routing/partition.ts), so
-- a later step can load and fence the rows of some partitions only. NULL for rows that belong to no
-- session (cron, pairing, channels) and for rows written before this migration until the owner
-- backfills them at its start (src/state/postgres/backfill-parts.ts).
ALTER TABLE state_rows ADD COLUMN part smallint;
ALTER TABLE transcripts ADD COLUMN part smallint;

-- A table's rows of some partitions: `WHERE tbl = $1 AND part = ANY($2)`, in insertion order.
CREATE INDEX state_rows_tbl_part_ord ON state_rows (tbl, part, ord);

-- The number of partitions, fixed at the schema's first use: every gateway on the schema hashes
-- session keys modulo this count, so it never changes once rows carry parts.
INSERT INTO cluster_settings (name, value) VALUES ('partitions', '256') ON CONFLICT (name) DO NOTHING;

-- The owner's start looks for transcripts still without a part (written before this migration) to
-- give them their session's; this keeps that look cheap once they have one.
CREATE INDEX transcripts_part_unset ON transcripts (tid) WHERE part IS NULL;
