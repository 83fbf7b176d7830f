-- The hooks' token lockout, one for the whole cluster (docs/automation.md "Lockout", docs/scale-out.md
-- "Inbound on any gateway"): the owner and every standby count a client's hook attempts here, each
-- counted and answered in one statement, so a client locked out on one gateway is locked out on all,
-- and a takeover keeps the count. Every time is the database server's clock (ms since the epoch), never a gateway's.
CREATE TABLE hook_auth_failures (
  -- the client as the gateway names it (its address, or the trusted proxy's X-Forwarded-For)
  client text PRIMARY KEY,
  -- wrong tokens in the current window since the last right one (at most the limit + 1: refused ones; 0: cleared)
  failures integer NOT NULL,
  -- when the window began
  since_ms bigint NOT NULL,
  -- until when the client is refused, once at the limit
  locked_until_ms bigint,
  -- when the row means nothing any more (its lockout, or its window, is over): pruned by this index
  expires_ms bigint NOT NULL
);
CREATE INDEX hook_auth_failures_expires ON hook_auth_failures (expires_ms);
