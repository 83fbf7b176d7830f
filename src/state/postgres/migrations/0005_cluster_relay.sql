-- Where peers reach a member ("host:port"): a standby relays HTTP and WebSocket to the schema's
-- owner there (docs/scale-out.md). Null until the member listens.
ALTER TABLE cluster_members ADD COLUMN address text;

-- Values the members of this schema share. `relay_secret` authenticates a standby's relayed
-- requests to the owner; the first member that needs it creates it (random, from Node's crypto).
CREATE TABLE cluster_settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
