-- The hooks' token lockout, one for the whole cluster (docs/automation.md "Lockout", docs/scale-out.md
-- "Inbound on any gateway"): the owner and every standby count a client's failed hook tokens here, so
-- a client locked out on one gateway is locked out on all, and a takeover keeps the count.
CREATE TABLE hook_auth_failures (
  -- the client as the gateway names it (its address, or the trusted proxy's X-Forwarded-For)
  client text PRIMARY KEY,
  -- failed attempts in the current window
  failures integer NOT NULL,
  -- when the window began (ms since the epoch, the counting gateway's clock)
  since_ms bigint NOT NULL,
  -- until when the client is refused (ms), once over the limit
  locked_until_ms bigint
);
