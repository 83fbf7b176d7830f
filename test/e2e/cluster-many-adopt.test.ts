// Partitions adopted and evicted one by one (docs/scale-out.md "N owners", step 8): real gateway
// processes in `cluster.owners: "many"`. A member's share grows (a peer SIGKILLed) or shrinks (a
// peer joins) while turns of its own sessions run: they end normally, once each, the model asked
// once per step (no cut, no replay), and the member's "holding partitions" line says "adopted" or
// "evicted", not "opened". Each slow turn and child waits on a gate the test opens only once the rebalance
// settled, so a core reopened on the way (which drains for at most 10 s, then cuts) cuts it.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import type { Cluster, ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, servingClient } = useClusterClients();
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
/** Telegram DM chats allowed: enough that every gateway's share holds some of their sessions. */
const CHATS = Array.from({ length: 96 }, (_, i) => 4000 + i);

/** Requester chats: each spawns a worker (its child session key is random: any gateway may run it). */
const SPAWNS = Array.from({ length: 6 }, (_, i) => 5000 + i);
const AGENTS = {
  list: [
    { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["worker"] } },
    { id: "worker", model: "test/worker" },
  ],
};

/** A rule answering `first`, then `then` once the turn has the tool's result. */
const callThenSay = (when: string, first: PlayStep, then: PlayStep): PlaybookRule => ({ when, first, then });

/**
 * Chat c: "slow work c" answers "done c" once `gate` exists; "ping c" answers "pong c" at once.
 * Spawn chat c: "please spawn researcher c" spawns a worker on "dig into topic c", which answers once `gate` exists.
 */
const play = (gate: string): PlaybookRule[] => [
  { when: "Sub-agent announce step", first: { text: "Result: summed up\nNotes: none" } },
  ...CHATS.flatMap((c): PlaybookRule[] => [
    { when: `slow work ${c}`, first: { text: `done ${c}`, waitForFile: gate } },
    { when: `ping ${c}`, first: { text: `pong ${c}` } },
  ]),
  ...SPAWNS.flatMap((c): PlaybookRule[] => [
    { when: `dig into topic ${c}`, first: { text: `topic ${c} found`, waitForFile: gate } },
    callThenSay(
      `please spawn researcher ${c}`,
      { toolCalls: [{ name: "sessions_spawn", input: { task: `dig into topic ${c}`, agentId: "worker" } }] },
      { text: `on it ${c}` },
    ),
  ]),
];

/** The gateway's "holding partitions" log lines, oldest first. */
function holdingLines(
  gateway: ClusterGateway,
): Array<{ change?: string; moved?: string; cut?: boolean; count: number; ms: number }> {
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
  const chats = [...CHATS, ...SPAWNS].map(String);
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
    config: { agents: AGENTS, session: { dmScope: "per-channel-peer" } },
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
  /** Whether every one of `whens` was asked of some gateway's model. */
  const allPlayed = async (whens: string[]) => {
    const all = new Set((await Promise.all(cluster.gateways.map(played))).flat());
    return whens.every((when) => all.has(when));
  };
  /** Sends "slow work c" into each chat; resolves once every turn is waiting on the gate (its model call made). */
  const startSlow = async (slow: number[]) => {
    for (const c of slow) fake.push(adaDm(`slow work ${c}`, 1, c));
    await until(() => allPlayed(slow.map((c) => `slow work ${c}`)), 30_000);
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
  /** Each spawn chat spawns its worker; resolves with the child session keys once every child waits on the gate (its spawning turn over). */
  const startChildren = async (): Promise<Map<number, string>> => {
    for (const c of SPAWNS) fake.push(adaDm(`please spawn researcher ${c}`, 1, c));
    let children = new Map<number, string>();
    await until(async () => {
      const records = (await cluster.rows("subagents")).map(
        (r) => r.value as { task: string; childSessionKey: string; state: string; queued?: boolean },
      );
      const running = records.filter((r) => r.state === "running" && !r.queued);
      children = new Map(running.map((r) => [Number(r.task.split(" ").at(-1)), r.childSessionKey]));
      return (
        children.size === SPAWNS.length &&
        SPAWNS.every((c) => sentTo(c).includes(`on it ${c}`)) &&
        (await allPlayed(SPAWNS.map((c) => `dig into topic ${c}`)))
      );
    }, 30_000);
    return children;
  };
  /** The announces chat c was sent so far. */
  const announcesTo = (c: number) => sentTo(c).filter((t) => t.includes("Status:"));
  return {
    cluster,
    callsOf,
    startSlow,
    ping,
    finishSlow,
    sentTo,
    startChildren,
    announcesTo,
    flush: () => fake.flush(),
  };
}

/** `n` chats whose DM sessions are in `parts`, none of `skip`. */
function chatsIn(parts: readonly number[], n: number, skip: number[] = []): number[] {
  const found = CHATS.filter((c) => !skip.includes(c) && parts.includes(partOf(`agent:main:telegram:dm:${c}`)));
  expect(found.length, `chats in partitions ${parts.join(",")}`).toBeGreaterThanOrEqual(n);
  return found.slice(0, n);
}

/** `n` chats whose DM sessions `holder` holds in `split`, none of `skip`. */
const chatsOn = (split: Map<string, number[]>, holder: ClusterGateway, n: number, skip: number[] = []) =>
  chatsIn(split.get(holder.name)!, n, skip);

/**
 * Asserts each of `gateways` logged "holding partitions" lines after `marks` (its line counts then),
 * all of `change` (no core opened) and none with a turn cut; returns their `ms`.
 */
function expectChanges(gateways: ClusterGateway[], marks: number[], change: "adopted" | "evicted"): number[][] {
  const after = gateways.map((g, i) => holdingLines(g).slice(marks[i]));
  for (const [i, lines] of after.entries()) {
    expect(lines.length, gateways[i]!.name).toBeGreaterThan(0);
    expect(
      lines.map((l) => [l.change, l.cut ?? false]),
      gateways[i]!.name,
    ).toEqual(lines.map(() => [change, false]));
  }
  return after.map((lines) => lines.map((l) => l.ms));
}

/** Model calls by node id: one on `holder`, none on the others. */
const onceOn = (cluster: Cluster, holder: ClusterGateway) =>
  Object.fromEntries(cluster.gateways.map((g) => [g.name, g === holder ? 1 : 0]));

/**
 * The gateway to kill: not the global holder (becoming it still opens the global core), the one of
 * the others running the most children (`childOn(c)`: the holder of spawn chat c's child); the others.
 */
async function victimOf(cluster: Cluster, childOn: (c: number) => ClusterGateway) {
  const global = await cluster.owner();
  const childrenOn = (g: ClusterGateway) => SPAWNS.filter((c) => childOn(c) === g).length;
  const others = cluster.gateways.filter((g) => g !== global);
  const victim = others.sort((a, b) => childrenOn(b) - childrenOn(a))[0]!;
  expect(childrenOn(victim)).toBeGreaterThan(0);
  return { global, victim, survivors: cluster.gateways.filter((g) => g !== victim), childrenThere: childrenOn(victim) };
}

describe('cluster.owners: "many": partitions adopted and evicted one by one', () => {
  it("a peer's SIGKILL cuts no long run of a survivor; the killed gateway's turns run again once on a survivor, its sub-agents are announced interrupted once, and a survivor answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo, startChildren, announcesTo, flush } =
      await manyGateways(3);
    const split = await settledSplit(cluster);
    /** The gateway holding session `key`'s partition. */
    const holderOf = (key: string) => cluster.gateways.find((g) => split.get(g.name)!.includes(partOf(key)))!;
    const slowOn = new Map(cluster.gateways.map((g) => [g, chatsOn(split, g, 2)]));
    const slow = [...slowOn.values()].flat();
    await startSlow(slow);
    const children = await startChildren();
    const { global, victim, survivors, childrenThere } = await victimOf(cluster, (c) => holderOf(children.get(c)!));
    const pinged = chatsOn(split, victim, 1, slow)[0]!;
    const marks = survivors.map((g) => holdingLines(g).length);
    const killedAt = Date.now();
    await cluster.kill(victim);
    // A DM into a session of the killed gateway's partitions: a survivor answers it.
    await ping(pinged);
    const answeredMs = Date.now() - killedAt;
    await settledSplit(cluster, survivors);
    const settledMs = Date.now() - killedAt;
    await finishSlow(slow);
    await until(() => SPAWNS.every((c) => announcesTo(c).length > 0), 30_000);
    for (const c of slow) expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
    // The survivors' turns ran once, where they started: not cut, not replayed.
    for (const g of survivors)
      for (const c of slowOn.get(g)!) expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, g));
    // The killed gateway's turns: started there, run again once by a survivor, answered once (as before).
    for (const c of slowOn.get(victim)!) {
      const { [victim.name]: there, ...elsewhere } = await callsOf(`slow work ${c}`);
      expect([there, Object.values(elsewhere).reduce((a, b) => a + b)], `chat ${c}`).toEqual([1, 1]);
    }
    // Every child ran once; a survivor's ended normally, the killed gateway's is announced interrupted; once each.
    await global.idle();
    await flush();
    for (const c of SPAWNS) {
      const on = holderOf(children.get(c)!);
      expect(await callsOf(`dig into topic ${c}`), `chat ${c}`).toEqual(onceOn(cluster, on));
      expect(announcesTo(c), `chat ${c}`).toHaveLength(1);
      expect(announcesTo(c)[0], `chat ${c}`).toContain(on === victim ? "Status: error" : "Status: success");
    }
    // Each survivor's core took the partitions in: "adopted" lines only, no reopen.
    const adoptMs = expectChanges(survivors, marks, "adopted");
    process.stderr.write(
      `many owners adopt: ${victim.name} SIGKILLed (global ${global.name}, ${childrenThere} of ${SPAWNS.length} children): first answer by a survivor ${answeredMs} ms after the kill, split settled at ${settledMs} ms; adopt ms ${JSON.stringify(adoptMs)}\n`,
    );
  }, 120_000);

  it("a joining gateway takes idle partitions and cuts no running turn; it holds its share and answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo } = await manyGateways(2);
    const two = await settledSplit(cluster);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    // Turns in the partitions each would give up were they all idle (the highest): the busy ones stay.
    const highest = (g: ClusterGateway) => two.get(g.name)!.slice(Math.ceil(256 / 3));
    const slow = [...chatsIn(highest(first), 2), ...chatsIn(highest(second), 2)];
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
    // The two members gave partitions up from their running cores: "evicted" lines only (no reopen), no turn cut.
    const evictMs = expectChanges([first, second], marks, "evicted");
    process.stderr.write(
      `many owners evict: ${third.name} joined, split settled ${settledMs} ms later; evict ms ${JSON.stringify(evictMs)}; joiner ${JSON.stringify(holdingLines(third).map((l) => [l.change, l.count, l.ms]))}\n`,
    );
  }, 120_000);
});
