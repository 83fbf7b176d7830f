-- Sends claimed per chat lane (docs/scale-out.md "Sends claimed per chat lane"): a lane (channel,
-- account, chat, thread: the outbox's `laneOf`) is sent to by one gateway at a time. `holder` is
-- that gateway's incarnation; `fence` is a takeover counter, rising by one each time another
-- gateway takes the lane (read by nothing to decide a send); `until` is when the claim runs out if
-- it is not renewed (the server's clock). Rows a day past their `until` are deleted hourly
-- (`pruneLanes`, src/cluster/lane-claim-sql.ts): the counter of a chat quiet that long restarts.
CREATE TABLE outbox_lanes (
  lane text PRIMARY KEY,
  holder text NOT NULL,
  fence bigint NOT NULL,
  until timestamptz NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now()
);
