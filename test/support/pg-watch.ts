// Watching a real PostgreSQL from a test: the statements a pool sends, and who waits on a lock.
import type pg from "pg";

/** Every query the pool's connections send (one call is one round trip): a prepared one by its name. */
export function countQueries(pool: pg.Pool): string[] {
  const sent: string[] = [];
  const counted = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (counted.has(client)) return;
    counted.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const first = args[0] as string | { name?: string; text: string };
        sent.push(typeof first === "string" ? first : (first.name ?? first.text));
        return query(...args);
      },
    });
  });
  return sent;
}

/** True once `count` sessions other than the asker's wait on a lock (`where` picks them in pg_stat_activity). */
export async function waitsOnLock(pool: pg.Pool, where: string, value: unknown, count = 1): Promise<boolean> {
  const { rowCount } = await pool.query(
    `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND ${where}`,
    [value],
  );
  return rowCount === count;
}
