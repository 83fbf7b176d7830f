import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../src/logger.js";
import { createSessionStore } from "../src/sessions/session-store.js";
import { openLocalState } from "../src/state/local-state.js";
import { openStateBackend } from "../src/state/open-state-backend.js";
import type { StatePort } from "../src/state/state-port.js";
import { type BenchTable, verdict } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";
import { storeRow } from "./session-store.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const BURST = 5_000;
const SIZE = 100_000;
/** The listing of the `listing` table: 10,000 sessions. */
const LISTED = 10_000;

/** The two backends, opened as the gateway opens them. */
export type Backend = "local" | "postgres";

type Figures = Record<string, number>;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A state port on `backend` for the home `dir` (PostgreSQL: the schema `schema` of the bench server). */
async function openBackend(backend: Backend, dir: string, pg: BenchPostgres, schema: string): Promise<StatePort> {
  if (backend === "local") return openLocalState({ dir, logger: silent });
  const config = { backend: "postgres" as const, postgres: { url: pg.url, schema, poolSize: 10 } };
  return (await openStateBackend({ config, env: {}, dir, logger: silent })).state;
}

/** Seeds a store of SIZE sessions written by the store itself, reopens it and measures what the gateway feels. */
async function scenario(backend: Backend, pg: BenchPostgres): Promise<Figures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `sb-bench-${backend}-`));
  const schema = pg.freshSchema();
  const open = async () => {
    const state = await openBackend(backend, dir, pg, schema);
    const store = await createSessionStore({ state, path: path.join(dir, "sessions.json"), keys: {}, logger: silent });
    return { state, store };
  };
  try {
    const seed = await open();
    for (let i = 0; i < SIZE; i++) seed.store.patchNow(`agent:main:telegram:group:-100${i}`, () => storeRow(i));
    await seed.store.close();
    await seed.state.close();
    const openStart = performance.now();
    const { state, store } = await open();
    const openMs = performance.now() - openStart;
    const lists: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      store.list({ limit: LISTED });
      lists.push(performance.now() - start);
    }
    const single: number[] = [];
    for (let i = 0; i < 31; i++) {
      const start = performance.now();
      await store.patch("agent:main:telegram:group:-1007", () => ({ updatedAt: Date.now(), totalTokens: i }));
      single.push(performance.now() - start);
    }
    const trips = pg.roundTrips();
    const burstStart = performance.now();
    await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        store.patch(`agent:main:telegram:group:-100${(i * 7919) % SIZE}`, () => ({ updatedAt: Date.now() })),
      ),
    );
    const burstMs = performance.now() - burstStart;
    const burstTrips = pg.roundTrips() - trips;
    await store.close();
    await state.close();
    return {
      open: openMs,
      list: median(lists),
      single: median(single),
      burst: (BURST / burstMs) * 1000,
      burstTrips,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (n: number, digits = 0) => Number(n.toFixed(digits));

/**
 * The session store on local files and on PostgreSQL, paired: `rounds` rounds, each running both
 * backends back to back (alternating which goes first) so both meet the same machine load.
 */
export async function benchStorePostgres(pg: BenchPostgres, rounds = 3): Promise<BenchTable> {
  const runs: Record<Backend, Figures[]> = { local: [], postgres: [] };
  for (let i = 0; i < rounds; i++) {
    const order: Backend[] = i % 2 === 0 ? ["local", "postgres"] : ["postgres", "local"];
    for (const backend of order) runs[backend].push(await scenario(backend, pg));
  }
  const of = (backend: Backend, key: string) => median(runs[backend].map((f) => f[key]!));
  const ratio = (key: string) => median(runs.local.map((local, i) => runs.postgres[i]![key]! / local[key]!));
  const line = (name: string, key: string, digits: number) => ({
    case: name,
    local: round(of("local", key), digits),
    postgres: round(of("postgres", key), digits),
    "postgres/local (median of pairs)": round(ratio(key), 2),
  });
  const single = round(of("postgres", "single"), 2);
  return {
    title: `session store of ${SIZE.toLocaleString("en-US")} sessions, local files vs PostgreSQL (durable, fsync on): ${rounds} alternating pairs, medians`,
    rows: [
      line("open ms (rows the store wrote)", "open", 0),
      line(`list ${LISTED.toLocaleString("en-US")} rows ms`, "list", 1),
      line("single patch ms (median of 31)", "single", 2),
      line(`burst of ${BURST.toLocaleString("en-US")} patches: patches/s`, "burst", 0),
    ],
    notes: [
      verdict("PostgreSQL single patch", single, 5, "ms", true),
      verdict("PostgreSQL open at 100,000", round(of("postgres", "open")), 1_500, "ms", true),
      `PostgreSQL round trips for the burst of ${BURST}: ${of("postgres", "burstTrips")} (group commit: one statement per batch)`,
      "listing reads the in-memory image on both backends (the state port loads a table at open)",
    ],
  };
}
