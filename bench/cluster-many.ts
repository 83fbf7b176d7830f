// The cluster bench with `cluster.owners: "many"` (docs/scale-out.md "N owners"): when the gateways'
// partition split has settled, and the SIGKILLs of a partition owner and of the global holder.
import { partOf } from "../src/routing/partition.js";
import { firstAccepted, firstLogged, median } from "./cluster-failover.js";
import { type Cluster, type ClusterGateway, type Holding, ownerOf } from "./cluster-gateways.js";
import { type HookTurn, hookTurn, repliesReached } from "./cluster-load.js";
import { dm } from "./telegram-e2e.js";
import type { FakeTelegramServer } from "../test/fakes/fake-telegram-server.js";

const PARTITIONS = 256;
const GLOBAL_TAKEN = "holding the schema's writer lease: this gateway is the global holder";

/** The partitions of a "holding partitions" line's `parts` ("0-2, 5", "all", "none") as a set. */
export function partsOf(shown: string): Set<number> {
  if (shown === "all") return new Set(Array.from({ length: PARTITIONS }, (_, i) => i));
  const parts = new Set<number>();
  if (shown === "none") return parts;
  for (const range of shown.split(", ")) {
    const [from, to = from] = range.split("-").map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`not a partition range: "${range}"`);
    for (let part = from!; part <= to!; part++) parts.add(part);
  }
  return parts;
}

/** The gateways' last "holding partitions" lines if they share out all 256, each a share (1 to ceil(256 / gateways)). */
function split(gateways: ClusterGateway[]): Holding[] | undefined {
  const holdings = gateways.map((g) => g.holding());
  const share = Math.ceil(PARTITIONS / gateways.length);
  if (holdings.some((h) => h === undefined || h.count === 0 || h.count > share)) return undefined;
  const total = holdings.reduce((sum, h) => sum + h!.count, 0);
  return total === PARTITIONS ? (holdings as Holding[]) : undefined;
}

/** Resolves with the epoch ms of the last line of a split of all 256 over every gateway, whose lines are at or after `since` (checked every 20 ms). */
export async function settled(gateways: ClusterGateway[], since: number, timeoutMs = 90_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const holdings = split(gateways);
    const last = holdings && Math.max(...holdings.map((h) => h.time));
    if (last !== undefined && last >= since) return last;
    if (performance.now() > deadline)
      throw new Error(`no settled split in ${timeoutMs} ms: ${JSON.stringify(gateways.map((g) => g.holding()))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A webhook turn of `word` into one of the `sessions` load sessions held by `gateway` (its last "holding partitions"). */
function turnHeldBy(gateway: ClusterGateway, word: string, sessions: number): HookTurn {
  const held = partsOf(gateway.holding()?.parts ?? "none");
  for (let session = 0; session < sessions; session++) {
    const turn = { ...hookTurn("turn", session, sessions), word, i: 0 };
    if (held.has(partOf(turn.sessionKey))) return turn;
  }
  throw new Error(`none of the ${sessions} load sessions is held by the gateway on port ${gateway.port}`);
}

/** One SIGKILL in "many" mode: ms from it to each step (NaN: not timed for that kill). */
interface Kill {
  /** the survivors' new split of all 256 partitions (their last "holding partitions" line) */
  splitMs: number;
  /** a turn into a session the killed gateway held (posted to every survivor at the SIGKILL): its 202 and its reply */
  acceptedMs: number;
  replyMs: number;
  /** global holder only: the writer lease taken (its log), the bot polled again, a DM queued at the kill answered */
  leaseMs: number;
  polledMs: number;
  dmReplyMs: number;
}

/** Resolves with the epoch ms of the first getUpdates the fake received at or after `since` (epoch ms; checked every 5 ms). */
async function polledAfter(fake: FakeTelegramServer, since: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (let seen = 0; ; await new Promise((resolve) => setTimeout(resolve, 5))) {
    for (; seen < fake.calls.length; seen++) {
      const call = fake.calls[seen]!;
      if (call.method === "getUpdates" && call.at >= since) return call.at;
    }
    if (performance.now() > deadline) throw new Error(`no getUpdates within ${timeoutMs} ms`);
  }
}

/**
 * Kills `victim` (SIGKILL), runs `atKill` and posts `turn` to every survivor; times the 202, its
 * reply and the survivors' new split.
 */
async function killTimed(cluster: Cluster, victim: ClusterGateway, turn: HookTurn, atKill = () => {}) {
  const killedAt = Date.now();
  const started = performance.now();
  victim.child.kill("SIGKILL");
  cluster.gateways.splice(cluster.gateways.indexOf(victim), 1);
  atKill();
  const peers = [...cluster.gateways];
  const reply = repliesReached(cluster.fake, turn.word, 1, 90_000);
  reply.catch(() => undefined); // awaited below; a failed post throws first
  const accepted = await firstAccepted(peers, turn, started);
  const replied = await reply;
  const splitAt = await settled(peers, killedAt);
  return { killedAt, started, peers, acceptedMs: accepted.ms, replyMs: replied - started, splitMs: splitAt - killedAt };
}

/** SIGKILL of a gateway that is not the global holder, with a turn into one of its sessions posted to the survivors. */
async function killPartitionOwner(cluster: Cluster, run: number, sessions: number): Promise<Kill> {
  const global = await ownerOf(cluster.gateways);
  const victim = cluster.gateways.find((g) => g !== global)!;
  const kill = await killTimed(cluster, victim, turnHeldBy(victim, `ownerfail${run}`, sessions));
  return { ...kill, leaseMs: Number.NaN, polledMs: Number.NaN, dmReplyMs: Number.NaN };
}

/** SIGKILL of the global holder (it polls the bot), with a DM queued and a turn posted to the survivors. */
async function killGlobal(cluster: Cluster, run: number, sessions: number): Promise<Kill> {
  const global = await ownerOf(cluster.gateways);
  const direct = `dmglobalfail${run}`;
  const dmReply = repliesReached(cluster.fake, direct, 1, 90_000);
  dmReply.catch(() => undefined); // awaited below, after the kill's own steps
  // From chat 8,000 + run, "<direct> 0", queued once the global holder is dead.
  const kill = await killTimed(cluster, global, turnHeldBy(global, `globalfail${run}`, sessions), () =>
    cluster.fake.push(dm(0, 1, 8_000 + run, direct)),
  );
  const leaseAt = firstLogged(kill.peers, GLOBAL_TAKEN, kill.killedAt);
  return {
    ...kill,
    leaseMs: leaseAt - kill.killedAt,
    // A poll the killed holder sent just before its death can arrive after it: the first one after the lease.
    polledMs: (await polledAfter(cluster.fake, leaseAt, 90_000)) - kill.killedAt,
    dmReplyMs: (await dmReply) - kill.started,
  };
}

/** One line of a step: its median and each run, in ms from the SIGKILL. */
function stepLine(kills: Kill[], name: string, pick: (kill: Kill) => number): string {
  const each = kills.map((kill) => Math.round(pick(kill)));
  return `  ${name}: median ${Math.round(median(kills.map(pick)))} ms (runs: ${each.join(", ")})`;
}

/**
 * `runs` SIGKILLs of a partition owner, then `runs` of the global holder, on a settled "many" cluster;
 * after each a gateway is started in the victim's place and the split settles again, so every kill
 * leaves the same number of survivors. One line per step: the median and each run, in ms from the SIGKILL.
 */
export async function failoversMany(cluster: Cluster, runs: number, sessions: number): Promise<string[]> {
  const lines: string[] = [];
  const size = cluster.gateways.length;
  for (const [name, kill] of [
    ["a partition owner (not the global holder)", killPartitionOwner],
    ["the global holder", killGlobal],
  ] as const) {
    const kills: Kill[] = [];
    for (let run = 1; run <= runs; run++) {
      await settled(cluster.gateways, 0);
      const killed = await kill(cluster, run, sessions);
      kills.push(killed);
      await cluster.add();
      await settled(cluster.gateways, Date.now());
    }
    lines.push(`owners many, SIGKILL of ${name} of ${size} gateways, ${runs} runs; from the SIGKILL to:`);
    if (name === "the global holder")
      lines.push(
        stepLine(kills, "writer lease taken by a survivor (its log)", (k) => k.leaseMs),
        stepLine(kills, "the bot polled again (the fake's first getUpdates since that lease)", (k) => k.polledMs),
        stepLine(
          kills,
          "first reply served by a peer: a Telegram DM queued at the SIGKILL, answered",
          (k) => k.dmReplyMs,
        ),
      );
    lines.push(
      stepLine(kills, "the survivors hold all 256 partitions (their logs)", (k) => k.splitMs),
      stepLine(
        kills,
        "a turn into a session the killed gateway held, posted to every survivor: 202",
        (k) => k.acceptedMs,
      ),
      stepLine(kills, "that turn's reply at the fake Bot API (served by the session's new owner)", (k) => k.replyMs),
    );
  }
  return lines;
}
