// A standby's session reads at 10,000 sessions (docs/scale-out.md "Reads on a standby"): each
// read as a standby answers it (src/gateway/standby-reads.ts), over sessions its owner's store wrote.
import { parseConfig } from "../src/config/index.js";
import { createStandbyReads } from "../src/gateway/standby-reads.js";
import type { Logger } from "../src/logger.js";
import { createSessionStore } from "../src/sessions/session-store.js";
import { openPostgresDatabase } from "../src/state/postgres/database.js";
import { openPostgresState } from "../src/state/postgres/postgres-state.js";
import { type BenchTable, measureAsync } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const SESSIONS = 10_000;
const MINUTE = 60_000;

/** The reads measured, each asked of the standby as a client asks it. */
const READS: Array<[string, string, Record<string, unknown>]> = [
  ["sessions.list, limit 50", "sessions.list", { limit: 50 }],
  ["sessions.list, active 60 min, limit 50", "sessions.list", { activeMinutes: 60, limit: 50 }],
  ["sessions.list, label, limit 50", "sessions.list", { label: "team-3", limit: 50 }],
  ["sessions.list, rare search, limit 50", "sessions.list", { search: "person 9999", limit: 50 }],
  ["sessions.list, all 10,000", "sessions.list", {}],
  ["sessions.resolve, sessionId", "sessions.resolve", { sessionId: "s-5000" }],
  ["sessions.resolve, label", "sessions.resolve", { label: "only-one" }],
];

/** 10,000 sessions of one agent written through its store; a label on one in 100, one unique label. */
async function seed(pg: BenchPostgres) {
  const { config } = parseConfig({});
  const database = await openPostgresDatabase({ url: pg.url, schema: pg.freshSchema(), logger: silent });
  const state = openPostgresState(database, { logger: silent });
  const keys = { defaultAgentId: "main", mainKey: config.session.mainKey, scope: config.session.scope };
  const store = await createSessionStore({ state, path: "sessions-main.json", keys, logger: silent });
  const now = Date.now();
  for (let i = 0; i < SESSIONS; i++)
    store.patchNow(`agent:main:telegram:dm:${i}`, () => ({
      sessionId: `s-${i}`,
      updatedAt: now - i * MINUTE,
      displayName: `Person ${i}`,
      ...(i % 100 === 0 && { label: `team-${i % 7}` }),
      ...(i === 4242 && { label: "only-one" }),
    }));
  await state.flush();
  await state.close();
  return { config, database };
}

/** Median ms of each read, 9 runs after 2 warm-ups. */
export async function benchStandbyReads(pg: BenchPostgres): Promise<BenchTable> {
  const { config, database } = await seed(pg);
  const standby = createStandbyReads({ config, logger: silent, database: () => database });
  const rows = [];
  try {
    for (const [name, method, params] of READS) {
      const ask = async () => {
        const answer = await standby.answer({ type: "req", id: "1", method, params }, "bench");
        if (!(answer as { ok?: boolean } | undefined)?.ok) throw new Error(`${name}: ${JSON.stringify(answer)}`);
      };
      rows.push({ read: name, "median ms": Number((await measureAsync(ask, 9, 2)).toFixed(1)) });
    }
  } finally {
    await standby.close();
    await database.close();
  }
  return { title: `a standby's reads at ${SESSIONS.toLocaleString("en-US")} sessions`, rows };
}
