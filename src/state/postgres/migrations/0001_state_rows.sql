-- The state port's tables (src/state/state-port.ts) as rows: one row per (table, key), its value
-- the row's JSON. `ord` keeps a table's insertion order (a replaced row keeps its place, a row
-- deleted and written again goes last, as in a Map), so a gateway loads rows in the order the
-- local files keep them.
CREATE SEQUENCE state_rows_ord AS bigint;

CREATE TABLE state_rows (
  tbl text NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  ord bigint NOT NULL DEFAULT nextval('state_rows_ord'),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tbl, key)
);

ALTER SEQUENCE state_rows_ord OWNED BY state_rows.ord;

-- A table is loaded in insertion order when the gateway opens it.
CREATE INDEX state_rows_tbl_ord ON state_rows (tbl, ord);
