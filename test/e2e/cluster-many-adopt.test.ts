// Partitions adopted and evicted one by one (docs/scale-out.md "N owners", step 8): real gateway
// processes in `cluster.owners: "many"`. A member's share grows (a peer SIGKILLed) or shrinks (a
// peer joins) while turns of its own sessions run: they end normally, once each, the model asked
// once per step (no cut, no replay), and the member's "holding partitions" line says "adopted" or
// "evicted", not "opened". Each slow turn waits on a gate the test opens only once the rebalance
// settled, so a core reopened on the way (which drains for at most 10 s, then cuts) cuts it.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import type { Cluster, ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, servingClient } = useClusterClients();
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
/** Telegram DM chats allowed: enough that every gateway's share holds some of their sessions. */
const CHATS = Array.from({ length: 64 }, (_, i) => 4000 + i);

/** Chat c: "slow work c" answers "done c" once `gate` exists; "ping c" answers "pong c" at once. */
const play = (gate: string): PlaybookRule[] =>
  CHATS.flatMap((c): PlaybookRule[] => [
    { when: `slow work ${c}`, first: { text: `done ${c}`, waitForFile: gate } },
    { when: `ping ${c}`, first: { text: `pong ${c}` } },
  ]);

/** The gateway's "holding partitions" log lines, oldest first. */
function holdingLines(gateway: ClusterGateway): Array<{ change?: string; count: number; ms: number }> {
  return gateway
    .stderr()
    .split("\n")
    .filter((line) => line.includes('"holding partitions"'))
    .map((line) => JSON.parse(line));
}

/** `size` "many" gateways (each with its playbook log), the chats allowed; the gate file the slow turns wait on. */
async function manyGateways(size: number) {
  const fake = await fakeTelegram();
  const dir = await mkdtemp(path.join(tmpdir(), "sb-adopt-"));
  const gate = path.join(dir, "gate");
  const chats = CHATS.map(String);
  const cluster = await startCluster({
    size,
    cluster: CLUSTER,
    env: {
      SB_API_ROOT: fake.apiRoot,
      SB_LOG_LEVEL: "info",
      SB_PLAY: JSON.stringify(play(gate)),
      SB_TELEGRAM: JSON.stringify({ allowFrom: chats, owners: chats }),
    },
    envOf: Object.fromEntries([1, 2, 3].map((i) => [`gw-${i}`, { SB_PLAY_LOG: path.join(dir, `gw-${i}.log`) }])),
    config: { session: { dmScope: "per-channel-peer" } },
  });
  /** The rules (`when`) `gateway`'s playbook model was called with so far, one per model call. */
  const played = async (gateway: ClusterGateway): Promise<string[]> =>
    (await readFile(path.join(dir, `${gateway.name}.log`), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string);
  /** How many times each gateway's model was asked `when`, by node id. */
  const callsOf = async (when: string) =>
    Object.fromEntries(
      await Promise.all(
        cluster.gateways.map(async (g) => [g.name, (await played(g)).filter((w) => w === when).length]),
      ),
    ) as Record<string, number>;
  /** Sends "slow work c" into each chat; resolves once every turn is waiting on the gate (its model call made). */
  const startSlow = async (slow: number[]) => {
    for (const c of slow) fake.push(adaDm(`slow work ${c}`, 1, c));
    await until(async () => {
      const all = (await Promise.all(cluster.gateways.map(played))).flat();
      return slow.every((c) => all.includes(`slow work ${c}`));
    }, 30_000);
  };
  /** Sends "ping c" and resolves once "pong c" was sent back. */
  const ping = async (c: number) => {
    fake.push(adaDm(`ping ${c}`, 2, c));
    await until(() => fake.sent.some((s) => s.text === `pong ${c}`), 30_000);
  };
  /** Opens the gate; resolves once each slow chat got its "done c". */
  const finishSlow = async (slow: number[]) => {
    await writeFile(gate, "");
    await until(() => slow.every((c) => fake.sent.some((s) => s.text === `done ${c}`)), 30_000);
    await fake.flush();
  };
  /** What chat c was sent, in order. */
  const sentTo = (c: number) => fake.sent.filter((s) => s.chatId === String(c)).map((s) => s.text);
  return { cluster, callsOf, startSlow, ping, finishSlow, sentTo };
}

/** `n` chats whose DM sessions `holder` holds in `split`, none of `skip`. */
function chatsOn(split: Map<string, number[]>, holder: ClusterGateway, n: number, skip: number[] = []): number[] {
  const held = new Set(split.get(holder.name));
  const found = CHATS.filter((c) => !skip.includes(c) && held.has(partOf(`agent:main:telegram:dm:${c}`)));
  expect(found.length, `chats on ${holder.name}`).toBeGreaterThanOrEqual(n);
  return found.slice(0, n);
}

/** The "holding partitions" lines each of `gateways` logged after `marks` (their line counts then). */
const linesSince = (gateways: ClusterGateway[], marks: number[]) =>
  gateways.map((g, i) => holdingLines(g).slice(marks[i]));

/** Model calls by node id: one on `holder`, none on the others. */
const onceOn = (cluster: Cluster, holder: ClusterGateway) =>
  Object.fromEntries(cluster.gateways.map((g) => [g.name, g === holder ? 1 : 0]));

/** The global holder and the others. */
async function roles(cluster: Cluster) {
  const global = await cluster.owner();
  return { global, others: cluster.gateways.filter((g) => g !== global) };
}

describe('cluster.owners: "many": partitions adopted and evicted one by one', () => {
  it("a peer's SIGKILL cuts no long run of a survivor; the killed gateway's turns run again once on a survivor, which answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo } = await manyGateways(3);
    const split = await settledSplit(cluster);
    const { global, others } = await roles(cluster);
    const victim = others.at(-1)!;
    const survivors = cluster.gateways.filter((g) => g !== victim);
    const kept = survivors.flatMap((g) => chatsOn(split, g, 2));
    const cut = chatsOn(split, victim, 2);
    const pinged = chatsOn(split, victim, 1, cut)[0]!;
    await startSlow([...kept, ...cut]);
    const marks = survivors.map((g) => holdingLines(g).length);
    const killedAt = Date.now();
    await cluster.kill(victim);
    // A DM into a session of the killed gateway's partitions: a survivor answers it.
    await ping(pinged);
    const answeredMs = Date.now() - killedAt;
    await settledSplit(cluster, survivors);
    const settledMs = Date.now() - killedAt;
    await finishSlow([...kept, ...cut]);
    for (const c of [...kept, ...cut]) expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
    // The survivors' turns ran once, where they started: not cut, not replayed.
    const holderOf = (c: number) =>
      survivors.find((g) => split.get(g.name)!.includes(partOf(`agent:main:telegram:dm:${c}`)))!;
    for (const c of kept) expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, holderOf(c)));
    // The killed gateway's turns: started there, run again once by a survivor, answered once (as before).
    for (const c of cut) {
      const calls = await callsOf(`slow work ${c}`);
      expect(calls[victim.name], `chat ${c}`).toBe(1);
      expect(
        survivors.reduce((sum, g) => sum + calls[g.name]!, 0),
        `chat ${c}`,
      ).toBe(1);
    }
    // Each survivor's core took the partitions in: "adopted" lines only, no reopen.
    const after = linesSince(survivors, marks);
    for (const [i, lines] of after.entries()) {
      expect(lines.length, survivors[i]!.name).toBeGreaterThan(0);
      expect(
        lines.map((l) => l.change),
        survivors[i]!.name,
      ).toEqual(lines.map(() => "adopted"));
    }
    process.stderr.write(
      `many owners adopt: ${victim.name} SIGKILLed (global ${global.name}): first answer by a survivor ${answeredMs} ms after the kill, split settled at ${settledMs} ms; adopt ms ${JSON.stringify(after.map((lines) => lines.map((l) => l.ms)))}\n`,
    );
  }, 120_000);

  it("a joining gateway takes idle partitions and cuts no running turn; it holds its share and answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo } = await manyGateways(2);
    const two = await settledSplit(cluster);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    const slow = [...chatsOn(two, first, 2), ...chatsOn(two, second, 2)];
    await startSlow(slow);
    const marks = [first, second].map((g) => holdingLines(g).length);
    const joinedAt = Date.now();
    const third = await cluster.add();
    const three = await settledSplit(cluster);
    const settledMs = Date.now() - joinedAt;
    // The joiner holds its share, as cluster.status shows it.
    const client = await servingClient((await cluster.owner()).port);
    const status = await client.call<{ members: Array<{ nodeId: string; partitions: number }> }>("cluster.status", {});
    const share = status.members.find((m) => m.nodeId === third.name)?.partitions;
    expect(share).toBe(three.get(third.name)!.length);
    // At most ceil(256 / 3) each: the others keep 86, so the joiner holds 84 to 86.
    expect(share).toBeGreaterThanOrEqual(256 - 2 * Math.ceil(256 / 3));
    // A DM into one of its sessions: it answers it.
    const pinged = chatsOn(three, third, 1, slow)[0]!;
    await ping(pinged);
    expect(await callsOf(`ping ${pinged}`)).toMatchObject({ [third.name]: 1 });
    await finishSlow(slow);
    for (const c of slow) {
      expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
      const holder = two.get(first.name)!.includes(partOf(`agent:main:telegram:dm:${c}`)) ? first : second;
      expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, holder));
    }
    // The two members gave partitions up from their running cores: "evicted" lines only, no reopen.
    const after = linesSince([first, second], marks);
    for (const [i, lines] of after.entries()) {
      expect(lines.length, [first, second][i]!.name).toBeGreaterThan(0);
      expect(
        lines.map((l) => l.change),
        [first, second][i]!.name,
      ).toEqual(lines.map(() => "evicted"));
    }
    process.stderr.write(
      `many owners evict: ${third.name} joined, split settled ${settledMs} ms later; evict ms ${JSON.stringify(after.map((lines) => lines.map((l) => l.ms)))}; joiner ${JSON.stringify(holdingLines(third).map((l) => [l.change, l.count, l.ms]))}\n`,
    );
  }, 120_000);
});
