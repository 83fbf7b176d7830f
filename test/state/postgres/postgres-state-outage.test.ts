// The PostgreSQL server goes away while the gateway writes: writes wait, nothing unstored is
// acknowledged, and once the server is back every acknowledged write is there, exactly once.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { StatePort, TableSpec } from "../../../src/state/state-port.js";
import { freshSchema, usePrivatePostgres } from "../../support/postgres.js";

// A server of its own: this test stops it.
const privateServer = usePrivatePostgres();

const spec: TableSpec<{ n: number }> = {
  name: "writes",
  path: "writes.json",
  what: "write",
  check: (_key, row) => ({ value: row as { n: number } }),
  invalidRows: "keep",
};

async function open(schema: string): Promise<{ state: StatePort; close: () => Promise<void> }> {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({
    url: privateServer().url,
    schema,
    logger,
    retry: { firstMs: 20, mostMs: 200 },
    probeEveryMs: 0,
  });
  const state = openPostgresState(database, { logger });
  return { state, close: () => state.close().then(() => database.close()) };
}

describe("PostgreSQL restarting under a stream of writes", () => {
  it("acknowledges nothing while it is down, and keeps every acknowledged write across two restarts", async () => {
    const schema = freshSchema();
    const { state, close } = await open(schema);
    const table = await state.table(spec);
    const acked = new Set<number>();
    let next = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const batch = Array.from({ length: 10 }, () => next++);
        await Promise.all(batch.map((n) => table.set(`k${n}`, { n }).then(() => acked.add(n))));
      }
    })();
    for (const mode of ["immediate", "fast"] as const) {
      await expect.poll(() => acked.size, { timeout: 10_000 }).toBeGreaterThan(next > 0 ? acked.size + 20 : 20);
      await privateServer().stop(mode);
      const whileDown = acked.size;
      // A batch is waiting (begun, not acknowledged) while the server is away.
      await expect.poll(() => next - acked.size).toBeGreaterThan(0);
      expect(acked.size).toBe(whileDown);
      await privateServer().start();
    }
    writing = false;
    await writer;
    expect(acked.size).toBe(next);
    await close();

    const reopened = await open(schema);
    const again = await reopened.state.table(spec);
    expect(again.size).toBe(next);
    for (const n of acked) expect(again.get(`k${n}`), `write ${n}`).toEqual({ n });
    // Insertion order survives: keys come back in the order they were first written.
    expect([...again.keys()]).toEqual(Array.from({ length: next }, (_, n) => `k${n}`));
    await reopened.close();
  }, 90_000);
});
