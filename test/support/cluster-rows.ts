// What a cluster test compares before and after a paused gateway continues: every state row and
// every transcript message as stored now, in a stable order.

/** Every state row as stored now (table, key, value), in a stable order. */
export async function stateRows(query: (sql: string) => Promise<Array<{ row: string }>>): Promise<string[]> {
  return (await query("SELECT tbl || '/' || key || '=' || value::text AS row FROM state_rows ORDER BY tbl, key")).map(
    (r) => r.row,
  );
}

/** Every transcript message as stored now, in a stable order. */
export async function transcriptRows(query: (sql: string) => Promise<Array<{ row: string }>>): Promise<string[]> {
  return (
    await query("SELECT tid || '#' || seq || ' ' || message::text AS row FROM transcript_events ORDER BY tid, seq")
  ).map((r) => r.row);
}
