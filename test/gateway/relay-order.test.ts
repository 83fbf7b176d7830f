// One relayed socket's frames keep the order the client sent them (src/gateway/relay-reads.ts,
// docs/scale-out.md "Limits"): chat.send frames the standby stores go into the hand-off inbox (a real
// PostgreSQL schema) in that order; a frame the standby relays after all does not fall behind a later
// one; while a relayed chat.send/chat.abort waits for the owner's answer, chat.send is relayed too.
// Fake sockets: the owner's answers are frames we emit.
import { afterEach, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createStandbyChatSend } from "../../src/gateway/chat-send-handoff.js";
import { relayReads } from "../../src/gateway/relay-reads.js";
import type { StandbyReads } from "../../src/gateway/standby-front.js";
import type { HandoffTarget } from "../../src/hooks/hook-handoff.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { FakeSocket, sentIds } from "../support/fake-socket.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
const SESSION = "agent:main:webchat:dm:ada";
const text = (value: object) => Buffer.from(JSON.stringify(value));
const chatSend = (id: string, message: string) => ({
  type: "req",
  id,
  method: "chat.send",
  params: { sessionKey: SESSION, message, idempotencyKey: `k-${id}` },
});

/** A relayed socket with `reads`, whose `connect` the owner accepted; `send` forwards a relayed frame as relay-flow does. */
function relayed(reads: StandbyReads) {
  const client = new FakeSocket();
  const upstream = new FakeSocket();
  const filter = relayReads(client.ws, upstream.ws, { reads, token: "t", logger: createMemoryLogger() });
  const send = (value: object) => {
    const data = text(value);
    if (filter(data, false)) upstream.send(data);
  };
  send({ type: "req", id: "c", method: "connect", params: { auth: { token: "t" } } });
  upstream.frame({ type: "res", id: "c", ok: true, payload: { client: "cli" } });
  upstream.sent.length = 0;
  return { client, upstream, send };
}

/** The standby's chat.send storing into `joined`. */
const standbySends = (joined: ReturnType<HandoffTarget["joined"]>) =>
  createStandbyChatSend({
    config: parseConfig({}).config,
    target: { joined: () => joined, nodeId: "gw-standby" },
    logger: createMemoryLogger(),
  });

/** A relayed socket whose standby serves chat.send and records the ids it answered in `served`. */
function servingChatSend(served: unknown[]) {
  return relayed({
    serves: (method) => method === "chat.send",
    answer: async (frame) => {
      const { id } = frame as { id: string };
      served.push(id);
      return { type: "res", id, ok: true, payload: { status: "started" } };
    },
    close: async () => undefined,
  });
}

it("stores one socket's pipelined chat.send frames in the hand-off inbox in the order sent", async () => {
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger() });
  closers.push(() => database.close());
  const r = relayed(standbySends({ pool: database.pool, schema: database.schema }));
  const ids = Array.from({ length: 20 }, (_, i) => `s${i}`);
  for (const id of ids) r.send(chatSend(id, `m-${id}`)); // as ws delivers the frames of one read: at once
  await until(() => r.client.sent.length === ids.length);
  expect(sentIds(r.client)).toEqual(ids);
  const { rows } = await database.pool.query(`SELECT run_id FROM "${database.schema}".inbound_handoff ORDER BY id`);
  expect(rows.map((row) => row.run_id)).toEqual(ids.map((id) => `k-${id}`));
});

it("relays a chat.send the standby declines (a command) before the chat.abort sent after it", async () => {
  const r = relayed(standbySends({ pool: {} as never, schema: "unused" })); // a command never reaches the pool
  r.send(chatSend("1", "/stop"));
  r.send({ type: "req", id: "2", method: "chat.abort", params: { sessionKey: SESSION } });
  r.send(chatSend("3", "plain, after the command")); // relayed too: the owner has not answered "1" and "2"
  await until(() => r.upstream.sent.length === 3);
  expect(sentIds(r.upstream)).toEqual(["1", "2", "3"]);
});

it("stops reading the socket while 256 frames wait behind one being answered, and reads on once they went", async () => {
  let answerFirst: () => void = () => undefined;
  const first = new Promise<void>((resolve) => {
    answerFirst = resolve;
  });
  const r = relayed({
    serves: (method) => method === "chat.send",
    answer: async (frame) => {
      const { id } = frame as { id: string };
      if (id === "0") await first;
      return { type: "res", id, ok: true, payload: { status: "started" } };
    },
    close: async () => undefined,
  });
  for (let i = 0; i < 255; i++) r.send(chatSend(String(i), `m${i}`));
  expect(r.client.paused).toBe(false);
  r.send(chatSend("255", "m255"));
  expect(r.client.paused).toBe(true);
  answerFirst();
  await until(() => r.client.sent.length === 256);
  await until(() => !r.client.paused);
  expect(sentIds(r.client)).toEqual(Array.from({ length: 256 }, (_, i) => String(i)));
});

it("relays chat.send while a relayed chat.abort waits for the owner's answer, and serves it again after", async () => {
  const served: unknown[] = [];
  const r = servingChatSend(served);
  r.send({ type: "req", id: "a", method: "chat.abort", params: { sessionKey: SESSION } });
  r.send(chatSend("1", "after the abort"));
  await until(() => r.upstream.sent.length === 2);
  expect(sentIds(r.upstream)).toEqual(["a", "1"]);
  r.upstream.frame({ type: "res", id: "a", ok: true, payload: { aborted: true } });
  r.upstream.frame({ type: "res", id: "1", ok: true, payload: { status: "started" } });
  r.send(chatSend("2", "once the owner answered"));
  await until(() => r.client.sent.length === 1);
  expect(served).toEqual(["2"]);
  expect(sentIds(r.upstream)).toEqual(["a", "1"]);
});

it("relays a small chat.send that follows a relayed chat.send over 64 KiB the owner has not answered, and serves again after", async () => {
  const served: unknown[] = [];
  const r = servingChatSend(served);
  r.send(chatSend("big", "x".repeat(70 * 1024))); // a pasted log: too large to be stored here, relayed
  r.send(chatSend("small", "and one more thing"));
  await until(() => r.upstream.sent.length + r.client.sent.length === 2);
  expect(served).toEqual([]); // before: ["small"], stored at the standby while "big" waits at the owner
  expect(sentIds(r.upstream)).toEqual(["big", "small"]);
  r.upstream.frame({ type: "res", id: "big", ok: true, payload: { status: "started" } });
  r.upstream.frame({ type: "res", id: "small", ok: true, payload: { status: "started" } });
  r.send(chatSend("next", "once the owner answered"));
  await until(() => r.client.sent.length === 1);
  expect(served).toEqual(["next"]);
});
