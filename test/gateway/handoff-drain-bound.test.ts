// The bound on what an owner's own hook or Telegram webhook update waits for (src/gateway/handoff-drain.ts
// beforeOwnInbound): past it the inbound is stored anyway, order best effort (docs/scale-out.md).
import { describe, expect, it } from "vitest";
import { createHandoffDrain } from "../../src/gateway/handoff-drain.js";
import { createMemoryLogger } from "../../src/logger.js";
import type { PostgresDatabase } from "../../src/state/postgres/database.js";

describe("the hand-off drain's wait before an owner's own inbound", () => {
  it("waits for a pass before an owner's own inbound at most its bound, then lets it be stored (a pass that never settles)", async () => {
    const logger = createMemoryLogger();
    let reads = 0;
    const stuck = {
      pool: {
        query: () => {
          reads++;
          return new Promise(() => {});
        },
      },
      schema: "stuck",
      transaction: () => new Promise(() => {}),
    } as unknown as PostgresDatabase;
    const drain = createHandoffDrain({ database: stuck, intake: {}, logger, heartbeatMs: 60_000, waitMs: 50 });
    await drain.beforeOwnInbound();
    await drain.beforeOwnInbound();
    expect(reads).toBe(1);
    expect(logger.records.filter((r) => r.level === "warn").map((r) => [r.message, r.fields.waitMs])).toEqual([
      ["hand-off inbox pass still running; this inbound is stored without it (order best effort)", 50],
      ["hand-off inbox pass still running; this inbound is stored without it (order best effort)", 50],
    ]);
  });
});
