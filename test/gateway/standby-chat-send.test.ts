// `chat.send` on a standby (src/gateway/chat-send-handoff.ts, docs/scale-out.md "Inbound on any
// gateway"): on a relayed socket the owner accepted with the standby's own token, the owner's
// handler checks the request and the message is stored in the hand-off inbox of a real PostgreSQL
// schema, answered as the owner answers; with another token, a command, or before joining, it is
// relayed. Fake sockets: the owner's answers are frames we emit.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { parseConfig } from "../../src/config/index.js";
import { createStandbyChatSend } from "../../src/gateway/chat-send-handoff.js";
import { relayReads } from "../../src/gateway/relay-reads.js";
import { createMemoryLogger } from "../../src/logger.js";
import { FakeSocket } from "../support/fake-socket.js";
import { until } from "../support/gateway-child.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Joined = { pool: pg.Pool; schema: string } | undefined;
const SESSION = "agent:main:webchat:dm:ada";

/** A socket relayed by a standby with `token`, storing into `joined`, whose `connect` (token `presented`) the owner accepted. */
function relayedSocket(joined: Joined, token: string, presented = token) {
  const client = new FakeSocket();
  const upstream = new FakeSocket();
  const logger = createMemoryLogger();
  const sends = createStandbyChatSend({
    config: parseConfig({}).config,
    target: { joined: () => joined, nodeId: "gw-standby" },
    logger,
  });
  const deps = { reads: sends, token, logger: createMemoryLogger() };
  const filter = relayReads(client as unknown as WebSocket, upstream as unknown as WebSocket, deps);
  filter(
    Buffer.from(JSON.stringify({ type: "req", id: "c", method: "connect", params: { auth: { token: presented } } })),
    false,
  );
  upstream.frame({ type: "res", id: "c", ok: true, payload: { client: "cli-1" } });
  let next = 0;
  const sentWith = (socket: FakeSocket, id: string) => socket.sent.find((s) => JSON.parse(s).id === id);
  /** Sends a `chat.send`: "relayed" (at once, or once the standby declined it), or the standby's answer. */
  const send = async (params: object): Promise<unknown> => {
    const id = `s${++next}`;
    const frame = { type: "req", id, method: "chat.send", params };
    if (filter(Buffer.from(JSON.stringify(frame)), false)) return "relayed";
    await until(() => sentWith(client, id) !== undefined || sentWith(upstream, id) !== undefined, 5_000);
    const answer = sentWith(client, id);
    return answer ? JSON.parse(answer) : sentWith(upstream, id) && "relayed";
  };
  return { send, upstream, logger };
}

async function freshDatabase() {
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger() });
  closers.push(() => database.close());
  return database;
}

const rows = async (pool: pg.Pool) =>
  (await pool.query("SELECT kind, dedupe_key, run_id, received_by, payload FROM inbound_handoff ORDER BY id")).rows;

describe("chat.send on a standby", () => {
  it("checks with the owner's handler, stores for the owner under its inbox key and answers as the owner does; a repeat stores nothing", async () => {
    const database = await freshDatabase();
    const { send } = relayedSocket({ pool: database.pool, schema: database.schema }, "shared-token");
    const first = await send({ sessionKey: SESSION, message: "hello there", idempotencyKey: "key-1" });
    expect(first).toEqual({
      type: "res",
      id: "s1",
      ok: true,
      payload: { runId: "key-1", sessionKey: SESSION, status: "started" },
    });
    const again = await send({ sessionKey: SESSION, message: "hello there", idempotencyKey: "key-1" });
    expect(again).toMatchObject({ ok: true, payload: { runId: "key-1", sessionKey: SESSION, status: "duplicate" } });
    const stored = await rows(database.pool);
    expect(stored).toEqual([
      {
        kind: "chat-send",
        dedupe_key: `webchat:default:${SESSION}:key-1`,
        run_id: "key-1",
        received_by: "gw-standby",
        payload: { sessionKey: SESSION, message: expect.objectContaining({ text: "hello there", messageId: "key-1" }) },
      },
    ]);
    expect(stored[0].payload.message.sender).toEqual({ id: "cli-1", name: "owner" });
    // The owner's checks: bad params are refused, nothing stored.
    const empty = await send({ sessionKey: SESSION, message: "  " });
    const unknownField = await send({ sessionKey: SESSION, message: "hi", extra: 1 });
    expect([empty, unknownField]).toMatchObject([
      { ok: false, error: { code: "INVALID_REQUEST", message: "invalid chat.send params: message: message required" } },
      { ok: false, error: { code: "INVALID_REQUEST" } },
    ]);
    // A command is the owner's to run and answer: relayed.
    expect(await send({ sessionKey: SESSION, message: "/status" })).toBe("relayed");
    expect(await rows(database.pool)).toHaveLength(1);
  });

  it("is relayed to the owner when the owner accepted a token the standby is not configured with, or before the standby joined", async () => {
    const database = await freshDatabase();
    const other = relayedSocket({ pool: database.pool, schema: database.schema }, "standby-token", "owner-token");
    expect(await other.send({ sessionKey: SESSION, message: "hi", idempotencyKey: "k" })).toBe("relayed");
    const unjoined = relayedSocket(undefined, "shared-token");
    expect(await unjoined.send({ sessionKey: SESSION, message: "hi", idempotencyKey: "k" })).toBe("relayed");
    expect(await rows(database.pool)).toEqual([]);
  });

  it("refuses as the owner does (INTERNAL, its log naming STORAGE_FAILED) while the database is away", async () => {
    const away = new pg.Pool({
      connectionString: "postgres://postgres@127.0.0.1:9/postgres",
      connectionTimeoutMillis: 2_000,
    });
    away.on("error", () => {});
    closers.push(() => away.end());
    const { send, logger } = relayedSocket({ pool: away, schema: "away" }, "shared-token");
    const refused = await send({ sessionKey: SESSION, message: "hi", idempotencyKey: "k" });
    expect(refused).toMatchObject({ ok: false, error: { code: "INTERNAL" } });
    const logged = logger.records.filter((r) => r.level === "error" || r.level === "warn");
    expect(logged.map((r) => (r.fields.err as { code?: unknown } | undefined)?.code)).toContain("STORAGE_FAILED");
  });
});
