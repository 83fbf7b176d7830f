-- Transcripts (src/sessions/transcripts/transcripts-port.ts): one row per transcript or archive of
-- an agent, one row per event (message). A reset archives a transcript by renaming its row (O(1),
-- the events stay where they are); `last_seq` numbers the events and `last_eid` makes a retried
-- append (a connection lost during COMMIT) land once.
CREATE TABLE transcripts (
  tid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent text NOT NULL,
  -- the transcript id ("<sessionId>" or "<sessionId>-topic-<topic>"), or the archive's name
  name text NOT NULL,
  archived_at timestamptz,
  header jsonb NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  last_eid uuid,
  bytes bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent, name)
);

-- The primary key is the (session, seq) index: a tail read walks it backwards, O(page) at any length.
CREATE TABLE transcript_events (
  tid bigint NOT NULL REFERENCES transcripts (tid) ON DELETE CASCADE,
  seq bigint NOT NULL,
  tool boolean NOT NULL,
  message jsonb NOT NULL,
  PRIMARY KEY (tid, seq)
);
