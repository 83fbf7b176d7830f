// The cluster bench's failover: SIGKILL the schema's owner and time until a peer served the first reply.
import { type Cluster, type ClusterGateway, ownerOf, standbysReady } from "./cluster-gateways.js";
import { type HookTurn, hookTurn, postTurn, repliesReached } from "./cluster-load.js";
import { dm } from "./telegram-e2e.js";
import type { FakeTelegramServer } from "../test/fakes/fake-telegram-server.js";

/** Resolves with performance.now() once the fake got a `method` call past its first `from` calls (checked every 5 ms). */
async function callReached(fake: FakeTelegramServer, method: string, from: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (let seen = from; ; await new Promise((resolve) => setTimeout(resolve, 5))) {
    for (; seen < fake.calls.length; seen++) if (fake.calls[seen]!.method === method) return performance.now();
    if (performance.now() > deadline) throw new Error(`no ${method} call within ${timeoutMs} ms`);
  }
}

/** Log messages (start-gateway, core-cluster) that mark a takeover's steps. */
const LEASE_TAKEN = "holding the schema's writer lease: this gateway owns it";
const SERVING = "gateway listening";

/** One takeover: ms from the SIGKILL to each step. */
interface Takeover {
  leaseMs: number;
  /** the new owner's first Bot API call (getMe): its state is loaded and its inbox resumed by then */
  adaptersMs: number;
  servingMs: number;
  /** the reply to a DM queued at the SIGKILL */
  dmReplyMs: number;
  acceptedMs: number;
  /** posts to a survivor that got no answer within 5 s */
  hung: number;
  hookReplyMs: number;
  /** the new owner's start, each step in ms from the writer lease (its "gateway listening" log) */
  steps: Record<string, number>;
}

/** The first time (epoch ms) one of `gateways` logged `msg` at or after `since`. */
export function firstLogged(gateways: ClusterGateway[], msg: string, since: number): number {
  const times = gateways.flatMap((g) => g.logged(msg).filter((t) => t >= since));
  return times.length ? Math.min(...times) : Number.NaN;
}

/**
 * Posts `turn` to every survivor at once, each again every 20 ms until one answers 202 (the same
 * idempotency key: one turn, one reply); ms from `started` to that 202, and the posts left unanswered for 5 s.
 */
export async function firstAccepted(peers: ClusterGateway[], turn: HookTurn, started: number) {
  let ms = Number.NaN;
  let hung = 0;
  const tryPeer = async (peer: ClusterGateway) => {
    while (Number.isNaN(ms) && performance.now() - started < 60_000) {
      const status = await postTurn(peer.port, turn, 5_000);
      if (status === 202) ms = Math.min(performance.now() - started, Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms);
      else if (status === 0) hung++;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await Promise.all(peers.map(tryPeer));
  if (Number.isNaN(ms)) throw new Error("no surviving gateway accepted a turn within 60 s of the SIGKILL");
  return { ms, hung };
}

/**
 * Kills the owner (SIGKILL) with a Telegram DM queued at that moment and a webhook turn posted to
 * every survivor; times the lease taken and the new owner serving (its log), its first Bot API call,
 * the DM's reply (the first reply a peer serves), the webhook's 202 and its reply.
 */
async function killOwner(cluster: Cluster, run: number): Promise<Takeover> {
  const owner = await ownerOf(cluster.gateways);
  const peers = cluster.gateways.filter((g) => g !== owner);
  await standbysReady(peers, 30_000);
  const [hook, direct] = [`failover${run}`, `dmfailover${run}`];
  const killedAt = Date.now();
  const started = performance.now();
  const adapters = callReached(cluster.fake, "getMe", cluster.fake.calls.length, 60_000);
  owner.child.kill("SIGKILL");
  cluster.gateways.splice(cluster.gateways.indexOf(owner), 1);
  cluster.fake.push(dm(0, 1, 7_000 + run, direct)); // from chat 7,000 + run: "<direct> 0"
  const replies = [repliesReached(cluster.fake, direct, 1, 60_000), repliesReached(cluster.fake, hook, 1, 60_000)];
  for (const reply of replies) reply.catch(() => undefined); // awaited below; a failed post throws first
  const accepted = await firstAccepted(peers, hookTurn(hook, 0, 1), started);
  const [dmReplied, hookReplied] = await Promise.all(replies);
  return {
    leaseMs: firstLogged(peers, LEASE_TAKEN, killedAt) - killedAt,
    adaptersMs: (await adapters) - started,
    servingMs: firstLogged(peers, SERVING, killedAt) - killedAt,
    dmReplyMs: dmReplied! - started,
    acceptedMs: accepted.ms,
    hung: accepted.hung,
    hookReplyMs: hookReplied! - started,
    steps: (await ownerOf(peers)).startup() ?? {},
  };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The new owner's start after the writer lease, step by step: each step's median ms over the runs. */
function stepsLine(takeovers: Takeover[]): string {
  const names = Object.keys(takeovers[0]?.steps ?? {}).filter((name) => name !== "writerLease");
  const each = names.map((name) => `${name} ${median(takeovers.map((t) => t.steps[name] ?? 0)).toFixed(1)}`);
  return `  the new owner's start after the writer lease, median ms per step (its log): ${each.join(", ")}`;
}

/**
 * `runs` takeovers on a running cluster: each kills the owner, times the takeover, then starts a
 * gateway in its place (a standby), so every run kills an owner with the same number of standbys
 * behind it. Returns one line per step: the median and each run, in ms from the SIGKILL.
 */
export async function failovers(cluster: Cluster, runs: number): Promise<string[]> {
  const takeovers: Takeover[] = [];
  for (let run = 1; run <= runs; run++) {
    takeovers.push(await killOwner(cluster, run));
    await cluster.add();
  }
  const line = (name: string, pick: (t: Takeover) => number) => {
    const each = takeovers.map((t) => Math.round(pick(t)));
    return `  ${name}: median ${Math.round(median(takeovers.map(pick)))} ms (runs: ${each.join(", ")})`;
  };
  return [
    `failover, SIGKILL of the owner with ${cluster.gateways.length - 1} standbys, ${runs} runs; from the SIGKILL to:`,
    line("writer lease taken by a standby (its log)", (t) => t.leaseMs),
    line("its adapters starting: state loaded, inbox resumed (its getMe at the fake)", (t) => t.adaptersMs),
    line("new owner serving: adapters, outbox and cron started (its log)", (t) => t.servingMs),
    line("first reply served by a peer: a Telegram DM queued at the SIGKILL, answered", (t) => t.dmReplyMs),
    line("a webhook turn posted to every survivor (again every 20 ms) answered 202", (t) => t.acceptedMs),
    line("that webhook turn's reply at the fake Bot API", (t) => t.hookReplyMs),
    stepsLine(takeovers),
    `  webhook posts to a survivor with no answer within 5 s (then sent again), per run: ${takeovers.map((t) => t.hung).join(", ")}`,
  ];
}
