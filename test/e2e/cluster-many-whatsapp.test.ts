// WhatsApp with `cluster.owners: "many"` (docs/scale-out.md "N owners", docs/whatsapp.md "Many
// mode"): three real gateway processes on one PostgreSQL schema, each with the real WhatsApp
// adapter on a fake WhatsApp of its own (test/fakes/whatsapp-child.ts). Only the global holder
// opens the linked device's socket and receives; each session's owner sends its replies through
// it (peer call `whatsapp.send`), claiming the chat's send lane, so every reply leaves the holder's
// socket, once and in order, whichever gateway ran the turn.
import { describe, expect, it } from "vitest";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { type HoldingLine, holdingLines, settledSplit } from "../support/cluster-many.js";
import { type ChatTraffic, chatsAnswered, chatsOutcome } from "../support/cluster-traffic.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);

const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };

/** `size` gateways of `cluster.owners: "many"` with WhatsApp open to every DM, a session per chat. */
function manyCluster(size = 3, sendDelayMs = 100): Promise<Cluster> {
  return startCluster({
    size,
    cluster: CLUSTER,
    // Each send on the holder's socket takes 100 ms (default): replies are still going out when a member is killed.
    env: {
      SB_CHANNEL: "whatsapp",
      SB_WHATSAPP: JSON.stringify({ dmPolicy: "open" }),
      SB_WA_SEND_DELAY_MS: String(sendDelayMs),
      SB_LOG_LEVEL: "info",
    },
    config: { session: { dmScope: "per-channel-peer", queue: { cap: 1000, debounceMs: 0 } } },
  });
}

/** What a gateway's fake WhatsApp accepted, as the traffic helpers read a platform's sends (chat: the number's digits). */
function sentOn(g: ClusterGateway) {
  const sent = g
    .lines()
    .filter((l) => l.startsWith("wa-sent "))
    .map((l) => JSON.parse(l.slice("wa-sent ".length)) as { jid: string; text: string });
  return { sent: sent.map((s) => ({ text: s.text, chatId: s.jid.split("@")[0]! })) };
}

/** How many DMs the holder stored (it sends each one's read receipt once stored). */
const readOn = (g: ClusterGateway) => g.lines().filter((l) => l.startsWith("wa-read ")).length;

/** Pushes `perChat` DMs into each of `chats` chats (numbers 1555001000 + i) on the holder's socket, round by round. */
function pushDms(holder: ClusterGateway, chats: number, perChat: number, after?: ChatTraffic): ChatTraffic {
  const traffic: ChatTraffic = new Map(after);
  const first = 1555001000;
  const firstRound = (after?.get(String(first))?.length ?? 0) + 1;
  for (let round = firstRound; round < firstRound + perChat; round++)
    for (let chat = first; chat < first + chats; chat++) {
      const text = `chat ${chat} message ${round}`;
      traffic.set(String(chat), [...(traffic.get(String(chat)) ?? []), text]);
      holder.process.stdin!.write(`wa-dm ${chat} ${text}\n`);
    }
  return traffic;
}

/** The gateways (node ids) that claimed the chats' send lanes: whose turns sent the replies. */
async function senders(cluster: Cluster): Promise<string[]> {
  const rows = await cluster.query<{ node_id: string }>(
    `SELECT DISTINCT m.node_id FROM outbox_lanes o JOIN cluster_members m ON m.incarnation = o.holder ORDER BY 1`,
  );
  return rows.map((row) => row.node_id);
}

/** A holder whose socket is open and whose core is settled on its share. */
async function settledHolder(cluster: Cluster): Promise<ClusterGateway> {
  await settledSplit(cluster);
  const holder = await cluster.owner();
  await until(() => holder.lines().some((l) => l.startsWith("wa-socket ")), 30_000);
  return holder;
}

/** On a failed wait: what is missing, and each gateway's warnings, errors and core changes, on stderr. */
function dump(cluster: Cluster, holder: ClusterGateway, traffic: ChatTraffic) {
  return (err: unknown) => {
    process.stderr.write(`MISSING ${JSON.stringify(chatsOutcome(sentOn(holder), traffic).missing)}\n`);
    for (const g of cluster.gateways) {
      process.stderr.write(`=== ${g.name} holder=${g === holder} sent=${sentOn(g).sent.length}\n`);
      const lines = g
        .stderr()
        .split("\n")
        .filter((l) => /"level":[45]0|holding|adapter started/.test(l));
      process.stderr.write(`${lines.slice(-25).join("\n")}\n`);
    }
    throw err;
  };
}

/** How many of the holder's "holding partitions" lines are of one `change` ("opened": a core opened; "evicted": partitions moved out). */
const changesOn = (g: ClusterGateway, change: HoldingLine["change"]) =>
  holdingLines(g).filter((line) => line.change === change).length;

/** Lines of `g`'s log (stderr) or stdout with `text`. */
const countOn = (g: ClusterGateway, text: string) =>
  g
    .stderr()
    .split("\n")
    .filter((l) => l.includes(text)).length + g.lines().filter((l) => l.startsWith(text)).length;

/**
 * One DM every `everyMs` into the 12 chats in turn (after `after`), until `done()` holds; a DM the
 * child could not deliver (the holder's socket closed: `wa-offline`) is left out of the traffic.
 */
async function trickle(holder: ClusterGateway, after: ChatTraffic, everyMs: number, done: () => boolean) {
  const traffic: ChatTraffic = new Map([...after].map(([chat, texts]) => [chat, [...texts]]));
  for (let i = 0; !done(); i++) {
    const chat = String(1555001000 + (i % 12));
    const text = `chat ${chat} message ${traffic.get(chat)!.length + 1} (trickle)`;
    traffic.get(chat)!.push(text);
    holder.process.stdin!.write(`wa-dm ${chat} ${text}\n`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  const offline = new Set(
    holder
      .lines()
      .filter((l) => l.startsWith("wa-offline "))
      .map((l) => l.split(" ").slice(2).join(" ")),
  );
  for (const [chat, texts] of traffic)
    traffic.set(
      chat,
      texts.filter((text) => !offline.has(text)),
    );
  return { traffic, offline: offline.size };
}

describe('WhatsApp with cluster.owners: "many"', () => {
  it("answers DMs in 12 chats whose sessions all three gateways own, each reply once and in order from the holder's socket; then loses none when a partition owner is SIGKILLed mid-burst", async () => {
    const cluster = await manyCluster();
    const holder = await settledHolder(cluster);
    const others = cluster.gateways.filter((g) => g !== holder);
    const burst = pushDms(holder, 12, 4);
    await until(() => chatsAnswered(sentOn(holder), burst), 60_000).catch(dump(cluster, holder, burst));
    expect(chatsOutcome(sentOn(holder), burst)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
    // Every gateway ran turns and claimed lanes; only the holder opened a socket and sent on it.
    expect(await senders(cluster)).toEqual(["gw-1", "gw-2", "gw-3"]);
    for (const g of others) expect(g.lines().filter((l) => l.startsWith("wa-"))).toEqual([]);
    await until(() => readOn(holder) === 48, 10_000);

    const dms = pushDms(holder, 12, 6, burst);
    // Killed once every DM is stored (its read receipt sent) and replies are still going out.
    await until(() => readOn(holder) >= 120 && sentOn(holder).sent.length >= 48 + 20, 60_000);
    const sentAtKill = sentOn(holder).sent.length - 48;
    const victim = others[0]!;
    const killedAt = Date.now();
    await cluster.kill(victim);
    await until(() => chatsAnswered(sentOn(holder), dms), 90_000).catch(dump(cluster, holder, dms));
    const answeredMs = Date.now() - killedAt;
    const { missing, repeated, outOfOrder, misrouted } = chatsOutcome(sentOn(holder), dms);
    expect({ missing, outOfOrder, misrouted }).toEqual({ missing: [], outOfOrder: [], misrouted: [] });
    // WhatsApp cannot deduplicate: a piece in flight at the kill may arrive twice, at most one per chat lane.
    expect(repeated.every(([, n]) => n === 2)).toBe(true);
    expect(repeated.length).toBeLessThanOrEqual(12);
    process.stderr.write(
      `many owners WhatsApp: SIGKILL of ${victim.name}, ${sentAtKill} of 72 replies out at the kill, every chat answered ${answeredMs} ms after; ${repeated.length} reply repeated\n`,
    );
  }, 180_000);

  it("answers once each DM pushed while a third gateway joins: the global holder moves partitions out of its running core and its socket never closes", async () => {
    const cluster = await manyCluster(2, 300);
    const holder = await settledHolder(cluster);
    // Replies still going out (300 ms per send, a DM every 25 ms) while the third joins.
    const burst = pushDms(holder, 12, 3);
    await until(() => sentOn(holder).sent.length >= 6, 60_000);
    const opened = changesOn(holder, "opened");
    const joining = cluster.add();
    // One DM every 25 ms until the holder gave its extras up half a second ago.
    let evictedAt = 0;
    const { traffic, offline } = await trickle(holder, burst, 25, () => {
      if (!evictedAt && changesOn(holder, "evicted") > 0) evictedAt = Date.now();
      return evictedAt > 0 && Date.now() - evictedAt > 500;
    });
    await joining;
    await until(() => chatsAnswered(sentOn(holder), traffic), 90_000).catch(dump(cluster, holder, traffic));
    const { missing, repeated, outOfOrder, misrouted } = chatsOutcome(sentOn(holder), traffic);
    expect({ missing, outOfOrder, misrouted }).toEqual({ missing: [], outOfOrder: [], misrouted: [] });
    expect(repeated).toEqual([]);
    // No core opened again on the holder: its socket stayed open and took every DM in.
    expect(changesOn(holder, "opened")).toBe(opened);
    expect(offline).toBe(0);
    expect(countOn(holder, "whatsapp message not stored")).toBe(0);
    const pushed = [...traffic.values()].reduce((n, texts) => n + texts.length, 0) - 36;
    process.stderr.write(
      `many owners WhatsApp join: ${pushed} DMs reached the holder around the join, none while its socket was closed\n`,
    );
  }, 180_000);
});
