// Session events across gateways (src/cluster/event-bridge.ts) on a real PostgreSQL: hubs bridged on
// pools of their own, as gateways are. An event emitted on one hub arrives once on the others and
// never comes back; one session's events keep their order; a 50 KB event arrives whole; schemas do
// not cross; a LISTEN connection ended by the server listens again without repeating anything.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { bridgeEvents, type EventBridgeOptions, eventsChannel } from "../../src/cluster/event-bridge.js";
import { MAX_NOTIFY_BYTES, encodeBatch } from "../../src/cluster/event-wire.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import type { EventFrame } from "../../src/gateway/protocol.js";
import { createMemoryLogger } from "../../src/logger.js";
import { closersAfterEach } from "../support/closed-after-each.js";
import { countQueries } from "../support/pg-watch.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, testPool, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closing = closersAfterEach();

/** A gateway's hub bridged on a pool of its own (application_name = its node id), and what its hub emitted. */
async function bridged(nodeId: string, schema = db.schema, options: Partial<EventBridgeOptions> = {}) {
  const pool = testPool({ connectionString: db.url, application_name: nodeId, max: 2 });
  const hub = createEventHub();
  const frames: EventFrame[] = [];
  hub.subscribe((frame) => frames.push(frame));
  const logger = createMemoryLogger();
  const bridge = bridgeEvents({ pool, schema, nodeId, hub, logger, retryMs: 50, ...options });
  closing.push(() => pool.end().catch(() => undefined)); // a test may have ended it
  closing.push(() => bridge.stop());
  await bridge.listening;
  const texts = () => frames.map((f) => (f.payload as { text?: string }).text);
  return { pool, hub, frames, texts, logger, bridge };
}

/** A pool whose statements wait until `open()`: a publish that hangs; `calls` sent, `done` answered. */
function gatedPool() {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  let calls = 0;
  let done = 0;
  const real = testPool({ connectionString: db.url, max: 1 });
  closing.push(() => real.end());
  const pool = {
    options: real.options,
    async query(...args: unknown[]) {
      calls++;
      await gate;
      const result = await real.query(...(args as [string, unknown[]]));
      done++;
      return result;
    },
  };
  return { pool: pool as unknown as pg.Pool, open, calls: () => calls, done: () => done };
}

const delivery = (text: string, sessionKey = "agent:main:main") => ({
  sessionKey,
  text,
  messageId: text,
  kind: "reply",
});

describe("bridgeEvents", () => {
  it("emits an event of A once on B, never back on A, with B's own seq; events of no session stay local", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    b.hub.emit("chat.delivery", delivery("b-before"));
    await until(() => a.texts().includes("b-before"));
    a.hub.emit("local.only", { text: "no-session" });
    a.hub.emit("chat.delivery", delivery("x"));
    a.hub.emit("chat.delivery", delivery("a-marker"));
    await until(() => b.texts().includes("a-marker"));
    // B answers after it heard A: were A's own events echoed, they would reach A before this one.
    b.hub.emit("chat.delivery", delivery("b-marker"));
    await until(() => a.texts().includes("b-marker"));
    expect(b.frames.map((f) => [f.event, (f.payload as { text: string }).text, f.seq])).toEqual([
      ["chat.delivery", "b-before", 1],
      ["chat.delivery", "x", 2],
      ["chat.delivery", "a-marker", 3],
      ["chat.delivery", "b-marker", 4],
    ]);
    expect(a.texts()).toEqual(["b-before", "no-session", "x", "a-marker", "b-marker"]);
    expect(b.frames[1]!.payload).toEqual(delivery("x"));
  });

  it("publishes nothing while mayPublish says its leases are old (a paused gateway, continued), and again once they are young", async () => {
    let young = true;
    const a = await bridged("gw-a", db.schema, { mayPublish: () => young });
    const b = await bridged("gw-b");
    a.hub.emit("chat.delivery", delivery("before"));
    young = false;
    a.hub.emit("chat.delivery", delivery("while-old"));
    young = true;
    a.hub.emit("chat.delivery", delivery("after"));
    await until(() => b.texts().includes("after"));
    expect(b.texts()).toEqual(["before", "after"]);
    expect(a.texts()).toEqual(["before", "while-old", "after"]);
    // Taken while young, aged before its batch went out (the batch starts after the current task): dropped too.
    a.hub.emit("chat.delivery", delivery("aged-before-publish"));
    young = false;
    await new Promise((resolve) => setImmediate(resolve));
    young = true;
    a.hub.emit("chat.delivery", delivery("marker"));
    await until(() => b.texts().includes("marker"));
    expect(b.texts()).toEqual(["before", "after", "marker"]);
  });

  it("keeps the order of 200 events of one session, emitted in bursts and one by one", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    for (let i = 0; i < 200; i++) {
      a.hub.emit("chat.delivery", delivery(String(i)));
      if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => b.frames.length >= 200);
    expect(b.texts()).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });

  it("publishes the events emitted together in one NOTIFY statement, and those emitted while it is in flight in the next", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    const sent = countQueries(a.pool);
    const notifies = () => sent.filter((q) => q.includes("pg_notify")).length;
    for (let i = 0; i < 100; i++) a.hub.emit("chat.delivery", delivery(String(i)));
    await until(() => notifies() === 1);
    for (let i = 100; i < 200; i++) a.hub.emit("chat.delivery", delivery(String(i)));
    await until(() => b.frames.length >= 200);
    expect(b.texts()).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    expect(notifies()).toBe(2);
  });

  it("cuts a burst of more than 256 K characters into several statements, in order", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    const sent = countQueries(a.pool);
    const pad = "p".repeat(600);
    for (let i = 0; i < 1_000; i++) a.hub.emit("chat.delivery", { ...delivery(String(i)), pad });
    await until(() => b.frames.length >= 1_000);
    expect(b.texts()).toEqual(Array.from({ length: 1_000 }, (_, i) => String(i)));
    expect(sent.filter((q) => q.includes("pg_notify")).length).toBe(3); // about 700 characters an event
  });

  it("drops the oldest waiting events beyond maxQueued while a publish is slow, with one warning", async () => {
    const slow = gatedPool();
    const a = await bridged("gw-a", db.schema, { maxQueued: 3, pool: slow.pool });
    const b = await bridged("gw-b");
    a.hub.emit("chat.delivery", delivery("0"));
    await until(() => slow.calls() === 1);
    for (let i = 1; i < 10; i++) a.hub.emit("chat.delivery", delivery(String(i)));
    slow.open();
    await until(() => b.texts().includes("9"));
    expect(b.texts()).toEqual(["0", "7", "8", "9"]);
    expect(a.logger.records.filter((r) => r.message.includes("queue full"))).toHaveLength(1);
  });

  it("delivers a 50 KB event (several NOTIFYs of under 8000 bytes) whole, characters of several bytes included", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    const long = "é€😀a".repeat(5_500); // 2, 3, 4 and 1 bytes: 55,000 bytes
    expect(Buffer.byteLength(long)).toBe(55_000);
    expect(encodeBatch("gw-a", "x.1", JSON.stringify(long)).length).toBeGreaterThan(6);
    a.hub.emit("chat.delivery", delivery(long));
    a.hub.emit("chat.delivery", delivery("after"));
    await until(() => b.texts().includes("after"));
    expect(b.texts()).toEqual([long, "after"]);
  });

  it("cuts every part under the NOTIFY limit and never inside a character", () => {
    const body = JSON.stringify(["chat", { text: "😀".repeat(9_000) }]);
    const parts = encodeBatch("gw-a", "x.1", body);
    for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(MAX_NOTIFY_BYTES);
    expect(parts.map((p) => p.slice(p.indexOf("\n") + 1)).join("")).toBe(body);
  });

  it("keeps schemas apart: an event of one schema never reaches a hub of another", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    const other = freshSchema();
    const c = await bridged("gw-c", other);
    const d = await bridged("gw-d", other);
    a.hub.emit("chat.delivery", delivery("schema-one"));
    await until(() => b.texts().includes("schema-one"));
    // D publishes after A's event committed: C, listening to both channels, would hear A's first.
    d.hub.emit("chat.delivery", delivery("schema-two"));
    await until(() => c.texts().includes("schema-two"));
    expect(c.texts()).toEqual(["schema-two"]);
    expect(b.texts()).toEqual(["schema-one"]);
  });

  it("listens again after its LISTEN connection is ended by the server; nothing is repeated", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    a.hub.emit("chat.delivery", delivery("before"));
    await until(() => b.texts().includes("before"));
    const listener = `SELECT pid FROM pg_stat_activity WHERE application_name = 'gw-b' AND state = 'idle' AND query LIKE 'LISTEN %'`;
    const { rows } = await a.pool.query<{ pid: number }>(listener);
    expect(rows).toHaveLength(1);
    await a.pool.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    await until(async () => {
      const again = await a.pool.query<{ pid: number }>(listener);
      return again.rows.length === 1 && again.rows[0]!.pid !== rows[0]!.pid;
    });
    a.hub.emit("chat.delivery", delivery("after"));
    await until(() => b.texts().includes("after"));
    expect(b.texts()).toEqual(["before", "after"]);
  });

  it("skips a notification it cannot read, with a warning, and emits the next ones", async () => {
    const a = await bridged("gw-a");
    const b = await bridged("gw-b");
    const notify = (payload: string) => a.pool.query("SELECT pg_notify($1, $2)", [eventsChannel(db.schema), payload]);
    await notify("e1 gw-x x.1 0 1\nnot json");
    await notify("e1 %E0%A4%A gw-x 0 1\n[]"); // a malformed origin
    await notify("something else");
    a.hub.emit("chat.delivery", delivery("after"));
    await until(() => b.texts().includes("after"));
    expect(b.texts()).toEqual(["after"]);
    expect(b.logger.records.filter((r) => r.message.includes("unreadable"))).toHaveLength(2);
  });

  it("publishes at stop the events emitted just before it, and only then stops", async () => {
    const slow = gatedPool();
    const a = await bridged("gw-a", db.schema, { pool: slow.pool });
    const b = await bridged("gw-b");
    for (let i = 0; i < 50; i++) a.hub.emit("chat.delivery", delivery(String(i)));
    const stopped = a.bridge.stop();
    await until(() => slow.calls() === 1);
    slow.open();
    await stopped;
    expect(slow.done()).toBe(1);
    await until(() => b.frames.length >= 50);
    expect(b.texts()).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
  });

  it("never fails an emit when publishing fails: the events are logged and dropped", async () => {
    const a = await bridged("gw-a");
    await a.pool.end(); // every query of the pool now fails
    expect(() => a.hub.emit("chat.delivery", delivery("lost"))).not.toThrow();
    await until(() => a.logger.records.some((r) => r.message.includes("not published")));
    expect(a.texts()).toEqual(["lost"]);
  });
});
