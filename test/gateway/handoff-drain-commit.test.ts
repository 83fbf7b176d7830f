// The hand-off drain with the owner's inbox on PostgreSQL, as a cluster owner runs it
// (src/gateway/handoff-pass.ts): a pass takes its hook rows in together, and each row is deleted by
// the very statement of the row writer that stores its intake (its inbox entry), so no crash can
// fall between the two; an owner's own hook, stored right after the pass queued those intakes,
// runs after the rows stored before it.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { StoredTurn } from "../../src/agents/stored-turn.js";
import { storeHandoff, waitingHandoffs } from "../../src/cluster/handoff-sql.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import { createHandoffDrain, ownerHandoffDrain } from "../../src/gateway/handoff-drain.js";
import { hookHandoffIntake } from "../../src/hooks/hook-handoff.js";
import { createInbox, inboundDedupeKey } from "../../src/inbound/inbox.js";
import { createStoredTurns } from "../../src/inbound/stored-turns.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const turn = (text: string, session = "agent:main:hook:ci"): StoredTurn => ({
  source: "hook",
  sessionKey: session,
  text,
  owner: false,
  provenance: { kind: "system", channel: "hook" },
  input: { isolated: false },
});

/** One row writer statement: the hand-off ids it deletes and the inbox keys it writes. */
type Batch = { handoffs: string[]; inboxKeys: string[] };

/** A migrated schema whose row writer's statements are recorded (the same object feeds the state port and the drain). */
async function recordedDatabase(): Promise<{ database: PostgresDatabase; batches: Batch[] }> {
  const opened = await openPostgresDatabase({
    url: db.url,
    schema: freshSchema(),
    logger: createMemoryLogger(),
    probeEveryMs: 0,
  });
  closing.push(() => opened.close());
  const batches: Batch[] = [];
  const spy = (client: pg.PoolClient) =>
    new Proxy(client, {
      get(target, key) {
        if (key !== "query") return Reflect.get(target, key);
        return (config: { name?: string; values?: string[][] }, ...rest: unknown[]) => {
          if (config?.name === "switchboard_batch") {
            const [tbls = [], keys = []] = [config.values![10]!, config.values![11]!];
            const inboxKeys = keys.filter((_, i) => tbls[i] === "inbox");
            batches.push({ handoffs: config.values![19]!.map(String), inboxKeys });
          }
          return (target.query as (...args: unknown[]) => unknown)(config, ...rest);
        };
      },
    });
  const database: PostgresDatabase = {
    ...opened,
    transaction: (fn, options) => opened.transaction((client) => fn(spy(client)), options),
  };
  return { database, batches };
}

/** An owner whose inbox is on `database`, with a runner recording each run's text. */
async function pgOwner(database: PostgresDatabase) {
  const logger = createMemoryLogger();
  const state = openPostgresState(database, { logger });
  closing.push(() => state.close());
  const inbox = await createInbox({ state, path: "inbox.json", logger });
  const turns = createStoredTurns({ inbox, logger });
  const runs: string[] = [];
  turns.register("hook", { run: async (t) => void runs.push(t.text) });
  const drain = createHandoffDrain({
    database,
    intake: { hook: hookHandoffIntake(turns.start) },
    logger,
    heartbeatMs: 60_000,
  });
  closing.push(() => drain.stop());
  return { turns, runs, drain };
}

const store = (database: PostgresDatabase, key: string, payload: StoredTurn) =>
  storeHandoff(database.pool, database.schema, {
    kind: "hook",
    dedupeKey: key,
    runId: randomUUID(),
    payload,
    receivedBy: "gw-standby",
  });

describe("the hand-off drain on the owner's PostgreSQL inbox", () => {
  it("takes a pass's hook rows in with one statement of the row writer, which deletes each row with its inbox entry", async () => {
    const { database, batches } = await recordedDatabase();
    const owner = await pgOwner(database);
    for (let i = 0; i < 20; i++)
      await store(database, `hook:burst-${i}`, turn(`burst ${i}`, `agent:main:hook:s${i % 4}`));
    const keyOf = new Map((await waitingHandoffs(database.pool)).map((row) => [row.id, row.dedupeKey]));
    await owner.drain.drain();
    await owner.turns.idle();
    expect(owner.runs).toHaveLength(20);
    expect(await waitingHandoffs(database.pool)).toEqual([]);
    const deleting = batches.filter((batch) => batch.handoffs.length > 0);
    expect(deleting).toHaveLength(1);
    expect(deleting[0]!.handoffs).toHaveLength(20);
    // Each row's delete rides with its own intake: no commit stores one without the other.
    for (const batch of deleting) expect(batch.inboxKeys).toEqual(batch.handoffs.map((id) => keyOf.get(id)));
    // Their inbox entries, stored and (the turns ended) done.
    const inbox = await database.pool.query(
      "SELECT key FROM state_rows WHERE tbl = 'inbox' AND value->>'status' = 'done'",
    );
    expect(inbox.rows).toHaveLength(20);
  });

  it("deletes a row whose key the inbox knows already (nothing stored) once its intake settled, and runs it once", async () => {
    const { database, batches } = await recordedDatabase();
    const owner = await pgOwner(database);
    await owner.turns.start(turn("first copy"), { dedupeKey: "hook:twice", runId: randomUUID() });
    await store(database, "hook:twice", turn("first copy"));
    await owner.drain.drain();
    await owner.turns.idle();
    expect(owner.runs).toEqual(["first copy"]);
    expect(await waitingHandoffs(database.pool)).toEqual([]);
    expect(batches.filter((batch) => batch.handoffs.length > 0).map((batch) => batch.inboxKeys)).toEqual([[]]);
  });

  it("stores an owner's own hook once the pass queued the intakes of the rows before it: that session's turns run in arrival order", async () => {
    const { database } = await recordedDatabase();
    const owner = await pgOwner(database);
    await store(database, "hook:a", turn("standby first"));
    await store(database, "hook:b", turn("standby second"));
    await owner.drain.beforeOwnInbound();
    await owner.turns.start(turn("owner third"), { dedupeKey: "hook:c", runId: randomUUID() });
    await until(() => owner.runs.length === 3, 10_000);
    expect(owner.runs).toEqual(["standby first", "standby second", "owner third"]);
  });

  it("takes a pass's platform update rows in with one statement too, in row order: an adapter's intake stores at once", async () => {
    const { database, batches } = await recordedDatabase();
    const logger = createMemoryLogger();
    const state = openPostgresState(database, { logger });
    closing.push(() => state.close());
    const inbox = await createInbox({ state, path: "inbox.json", logger });
    // A platform adapter as its contract asks: the store is queued before its first await.
    const pigeon = {
      id: "pigeon",
      async takeHandedOff(accountId: string, payload: unknown) {
        const { id, text } = payload as { id: string; text: string };
        const message = InboundMessageSchema.parse({
          channel: "pigeon",
          accountId,
          chat: { type: "direct", id: "coop-1" },
          sender: { id: "ada" },
          messageId: id,
          text,
          timestamp: 0,
        });
        await inbox.claim(inboundDedupeKey(message), message);
      },
    } as unknown as ChannelAdapter;
    const turns = createStoredTurns({ inbox, logger });
    const adapters = new Map([["pigeon", pigeon]]);
    const deps = {
      start: turns.start,
      accept: async () => Promise.reject(new Error("no chat.send in this test")),
      adapters,
      logger,
      heartbeatMs: 60_000,
    };
    const drain = ownerHandoffDrain(database, deps)!;
    closing.push(() => drain.stop());
    for (let i = 0; i < 10; i++)
      await storeHandoff(database.pool, database.schema, {
        kind: "pigeon-update",
        account: "default",
        dedupeKey: `pigeon-update:default:${i}`,
        payload: { id: String(i), text: `coo ${i}` },
        receivedBy: "gw-standby",
      });
    await drain.drain();
    expect(await waitingHandoffs(database.pool)).toEqual([]);
    const deleting = batches.filter((batch) => batch.handoffs.length > 0);
    expect(deleting.map((batch) => batch.handoffs.length)).toEqual([10]);
    // The chat's arrival order: each entry in row order, with its row's delete.
    expect(deleting[0]!.inboxKeys).toEqual(Array.from({ length: 10 }, (_, i) => `pigeon:default:coop-1:${i}`));
  });
});
