// The cluster bench's failover: SIGKILL the schema's owner and time until a peer served the first reply.
import { type Cluster, type ClusterGateway, ownerOf, standbysReady } from "./cluster-gateways.js";
import { postTurn, repliesReached } from "./cluster-load.js";
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
  acceptedMs: number;
  replyMs: number;
}

/** The first time (epoch ms) one of `gateways` logged `msg` at or after `since`. */
function firstLogged(gateways: ClusterGateway[], msg: string, since: number): number {
  const times = gateways.flatMap((g) => g.logged(msg).filter((t) => t >= since));
  return times.length ? Math.min(...times) : Number.NaN;
}

/**
 * Kills the owner (SIGKILL) and posts one turn to the surviving gateways in turn (every 20 ms until
 * one answers 202); times the lease taken and the new owner serving (from its log) and the reply at the fake.
 */
async function killOwner(cluster: Cluster, run: number): Promise<Takeover> {
  const owner = await ownerOf(cluster.gateways);
  const peers = cluster.gateways.filter((g) => g !== owner);
  await standbysReady(peers, 30_000);
  const word = `failover${run}`;
  const killedAt = Date.now();
  const started = performance.now();
  const adapters = callReached(cluster.fake, "getMe", cluster.fake.calls.length, 60_000);
  owner.child.kill("SIGKILL");
  cluster.gateways.splice(cluster.gateways.indexOf(owner), 1);
  let acceptedMs = Number.NaN;
  for (let attempt = 0; performance.now() - started < 60_000; attempt++) {
    if ((await postTurn(peers[attempt % peers.length]!.port, word, 0, 1)) === 202) {
      acceptedMs = performance.now() - started;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (Number.isNaN(acceptedMs)) throw new Error("no surviving gateway accepted a turn within 60 s of the SIGKILL");
  const replied = await repliesReached(cluster.fake, word, 1, 60_000);
  return {
    leaseMs: firstLogged(peers, LEASE_TAKEN, killedAt) - killedAt,
    adaptersMs: (await adapters) - started,
    servingMs: firstLogged(peers, SERVING, killedAt) - killedAt,
    acceptedMs,
    replyMs: replied - started,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

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
    line(
      "a turn posted to a survivor accepted (202: the new owner listens, before its core starts)",
      (t) => t.acceptedMs,
    ),
    line("its adapters starting: state loaded, inbox resumed (its getMe at the fake)", (t) => t.adaptersMs),
    line("new owner serving: adapters, outbox and cron started (its log)", (t) => t.servingMs),
    line("its reply at the fake Bot API (the first reply served by a peer)", (t) => t.replyMs),
  ];
}
