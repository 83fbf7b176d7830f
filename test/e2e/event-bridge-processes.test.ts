// Session events across gateways (src/cluster/event-bridge.ts) between real processes
// (test/fakes/bridge-process.ts: a hub and its bridge): a receiver stopped by SIGSTOP gets, once
// continued, every event sent meanwhile, in order (PostgreSQL keeps notifications for a listening
// connection); a sender killed by SIGKILL loses none of the events it had published.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { eventsChannel } from "../../src/cluster/event-bridge.js";
import { createReassembly, encodeBatch, readPart } from "../../src/cluster/event-wire.js";
import { closersAfterEach } from "../support/closed-after-each.js";
import { type NodeChild, useLineChildren } from "../support/cluster-node-child.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const start = useLineChildren("bridge-process.ts");
const closing = closersAfterEach();
const SESSION = "agent:main:main";

const bridgeChild = (nodeId: string) => start({ SB_PG_URL: db.url, SB_SCHEMA: db.schema, SB_NODE_ID: nodeId });

/** The texts of the events a child printed as received from another gateway. */
const received = (child: NodeChild): string[] =>
  child.lines
    .filter((line) => line.startsWith("event "))
    .map((line) => (JSON.parse(line.slice(6)) as { payload: { text: string } }).payload.text);

/** A listener of the test's own on the events channel: the texts of every event published, and a way to publish one. */
async function observer() {
  const client = new pg.Client({ connectionString: db.url });
  client.on("error", () => undefined);
  await client.connect();
  closing.push(() => client.end());
  const heard: string[] = [];
  const batches = createReassembly();
  client.on("notification", (n) => {
    const part = readPart(n.payload ?? "");
    const events = part && batches.add(part);
    for (const [, payload] of events ?? []) heard.push((payload as { text: string }).text);
  });
  await client.query(`LISTEN ${eventsChannel(db.schema)}`);
  const publish = async (text: string) => {
    const body = JSON.stringify([["chat.delivery", { sessionKey: SESSION, text }]]);
    for (const part of encodeBatch("observer", text, body))
      await client.query("SELECT pg_notify($1, $2)", [eventsChannel(db.schema), part]);
  };
  return { heard, publish };
}

const texts = (count: number) => Array.from({ length: count }, (_, i) => String(i));

describe("bridgeEvents between processes", () => {
  it("gives a receiver stopped by SIGSTOP, once continued, every event sent meanwhile, in order", async () => {
    const seen = await observer();
    const sender = await bridgeChild("gw-a");
    const receiver = await bridgeChild("gw-b");
    receiver.process.kill("SIGSTOP");
    sender.send(`emit 0 150 ${SESSION}`);
    await sender.line(/^emitted 150$/);
    sender.send(`emit 150 300 ${SESSION}`);
    await until(() => seen.heard.length >= 300);
    receiver.process.kill("SIGCONT");
    await until(() => received(receiver).length >= 300);
    expect(received(receiver)).toEqual(texts(300));
    expect(seen.heard).toEqual(texts(300));
  });

  it("loses none of the events a sender killed by SIGKILL had published", async () => {
    const seen = await observer();
    const sender = await bridgeChild("gw-a");
    const receiver = await bridgeChild("gw-b");
    receiver.process.kill("SIGSTOP"); // the events wait in PostgreSQL, not in the receiver
    sender.send(`stream ${SESSION}`);
    await until(() => seen.heard.length >= 100);
    sender.process.kill("SIGKILL");
    // Once the sender's connections are gone, nothing of it can still commit: a marker published
    // now comes after everything the sender published.
    await until(async () => (await activeBackends("gw-a")) === 0);
    await seen.publish("marker");
    await until(() => seen.heard.includes("marker"));
    const published = seen.heard.slice(0, -1);
    expect(published).toEqual(texts(published.length));
    receiver.process.kill("SIGCONT");
    await until(() => received(receiver).includes("marker"));
    expect(received(receiver)).toEqual([...published, "marker"]);
  });
});

/** Connections of the server opened under `name` (the bridge process's application_name). */
async function activeBackends(name: string): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
      [name],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}
