// A paused partition owner of `cluster.owners: "many"` (docs/scale-out.md "N owners") commits
// nothing, sends nothing and answers nothing for its sessions after it continues: the gateway that
// owns a busy session (not the global holder) is SIGSTOPped while its model step runs; the other
// takes its partitions at the lease TTL and answers the message itself; continued, the paused one
// writes no row, sends nothing, shows a client of the other gateway none of its events and exits,
// giving its leases up.
import { describe, expect, it } from "vitest";
import { eventsChannel } from "../../src/cluster/event-bridge.js";
import { encodeBatch } from "../../src/cluster/event-wire.js";
import { partOf } from "../../src/routing/partition.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { settledSplit } from "../support/cluster-many.js";
import { stateRows, transcriptRows } from "../support/cluster-rows.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, servingClient } = useClusterClients();

/** A client of `port` subscribed to `sessionKey`, and the events it was sent (a 503 while the holder reopens: retried). */
async function watching(port: number, sessionKey: string) {
  const client = await servingClient(port);
  const events: Array<{ event: string; payload: { sessionKey?: string; state?: string; text?: string } }> = [];
  client.onEvent((event, payload) => events.push({ event, payload: payload as (typeof events)[number]["payload"] }));
  await client.call("subscribe", { sessionKeys: [sessionKey] });
  return events;
}

/** An event the test notifies itself on the schema's events channel, after the paused gateway exited. */
const MARKER = "test.marker";

const CLUSTER = { leaseTtlMs: 2_000, heartbeatMs: 500, owners: "many" as const };
const SLOW = [{ when: "slow question", first: { text: "slow answer", delayMs: 3_000 } }];

/** A Telegram DM chat whose session (`dmScope: per-channel-peer`) is in one of `parts`. */
function chatIn(parts: readonly number[]): number {
  for (let chat = 5001; ; chat++) if (parts.includes(partOf(`agent:main:telegram:dm:${chat}`))) return chat;
}

describe('a SIGSTOPped partition owner of cluster.owners: "many"', () => {
  it("with a turn in flight is replaced at its lease TTL by the other gateway, which answers; continued, it commits nothing, sends nothing and exits", async () => {
    const fake = await fakeTelegram();
    const cluster = await startCluster({
      size: 2,
      cluster: CLUSTER,
      env: {
        SB_API_ROOT: fake.apiRoot,
        SB_PLAY: JSON.stringify(SLOW),
        SB_TELEGRAM: JSON.stringify({ dmPolicy: "open" }),
        SB_LOG_LEVEL: "info",
      },
      config: { session: { dmScope: "per-channel-peer" } },
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const paused = cluster.gateways.find((g) => g !== global)!;
    const chat = chatIn(split.get(paused.name)!);
    const sessionKey = `agent:main:telegram:dm:${chat}`;
    fake.push(adaDm("slow question", 1, chat));
    // The typing indicator starts with the turn on the session's owner, just before the model is asked.
    await fake.waitFor("sendChatAction");
    cluster.pause(paused);
    const pausedAt = Date.now();
    const answered = () => fake.sent.filter((s) => s.text === "slow answer");
    await until(() => answered().length > 0, 30_000);
    const answeredMs = Date.now() - pausedAt;
    await settledSplit(cluster, [global]);
    await global.idle();
    const before = { rows: await stateRows(cluster.query), transcript: await transcriptRows(cluster.query) };

    const events = await watching(global.port, sessionKey);
    cluster.resume(paused);
    // Nothing to wait for but its exit: then everything it would still have done is done.
    expect(await paused.exited).toEqual({ code: 1, signal: null });
    const marker = encodeBatch("test-marker", "marker.1", JSON.stringify([[MARKER, { sessionKey }]]));
    await cluster.query("SELECT pg_notify($1, part) FROM unnest($2::text[]) AS part", [
      eventsChannel(cluster.schema),
      marker,
    ]);
    await global.idle();
    expect(answered()).toEqual([expect.objectContaining({ chatId: String(chat), text: "slow answer" })]);
    expect(await stateRows(cluster.query)).toEqual(before.rows);
    expect(await transcriptRows(cluster.query)).toEqual(before.transcript);
    expect(before.transcript.filter((m) => m.includes("slow answer"))).toHaveLength(1);
    // A client of the global holder (connected after its reopen) saw none of the paused one's events:
    // its model step ended after SIGCONT. The marker, notified after that exit, arrives after any of them.
    await until(() => events.some((e) => e.event === MARKER), 10_000);
    expect(events.filter((e) => e.event !== MARKER)).toEqual([]);
    process.stderr.write(
      `many owners fencing: ${global.name} answered ${answeredMs} ms after the SIGSTOP of ${paused.name}\n`,
    );
  }, 90_000);
});
