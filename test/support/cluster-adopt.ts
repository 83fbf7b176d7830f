// Partitions adopted and evicted one by one (docs/scale-out.md "N owners", step 8): what the process
// tests of test/e2e/cluster-many-adopt.test.ts and cluster-many-promote.test.ts share. Each slow turn
// and child waits on a gate the test opens only once the rebalance settled, so a core reopened on the
// way (which drains for at most 10 s, then cuts) cuts it.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import type { Cluster, ClusterGateway } from "./cluster-harness.js";
import type { useClusterClients } from "./cluster-clients.js";
import { holdingLines } from "./cluster-many.js";
import { until } from "./gateway-child.js";

const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
/** Telegram DM chats allowed: enough that every gateway's share holds some of their sessions. */
const CHATS = Array.from({ length: 96 }, (_, i) => 4000 + i);

/** Requester chats: each spawns a worker (its child session key is random: any gateway may run it). */
export const SPAWNS = Array.from({ length: 6 }, (_, i) => 5000 + i);
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

/** `size` "many" gateways (each with its playbook log), the chats allowed; the gate file the slow turns wait on. */
export async function manyGateways(clients: ReturnType<typeof useClusterClients>, size: number) {
  const { startCluster, fakeTelegram } = clients;
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
export function chatsIn(parts: readonly number[], n: number, skip: number[] = []): number[] {
  const found = CHATS.filter((c) => !skip.includes(c) && parts.includes(partOf(`agent:main:telegram:dm:${c}`)));
  expect(found.length, `chats in partitions ${parts.join(",")}`).toBeGreaterThanOrEqual(n);
  return found.slice(0, n);
}

/** `n` chats whose DM sessions `holder` holds in `split`, none of `skip`. */
export const chatsOn = (split: Map<string, number[]>, holder: ClusterGateway, n: number, skip: number[] = []) =>
  chatsIn(split.get(holder.name)!, n, skip);

/**
 * Asserts each of `gateways` logged "holding partitions" lines after `marks` (its line counts then),
 * all of `change` (no core opened) and none with a turn cut; returns their `ms`.
 */
export function expectChanges(gateways: ClusterGateway[], marks: number[], change: "adopted" | "evicted"): number[][] {
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
export const onceOn = (cluster: Cluster, holder: ClusterGateway) =>
  Object.fromEntries(cluster.gateways.map((g) => [g.name, g === holder ? 1 : 0]));

/**
 * The gateway to kill: not the global holder (becoming it still opens the global core), the one of
 * the others running the most children (`childOn(c)`: the holder of spawn chat c's child); the others.
 */
export async function victimOf(cluster: Cluster, childOn: (c: number) => ClusterGateway) {
  const global = await cluster.owner();
  const childrenOn = (g: ClusterGateway) => SPAWNS.filter((c) => childOn(c) === g).length;
  const others = cluster.gateways.filter((g) => g !== global);
  const victim = others.sort((a, b) => childrenOn(b) - childrenOn(a))[0]!;
  expect(childrenOn(victim)).toBeGreaterThan(0);
  return { global, victim, survivors: cluster.gateways.filter((g) => g !== victim), childrenThere: childrenOn(victim) };
}
