// The cluster bench's load: webhook turns (`POST /hooks/agent`) spread over the gateways' ports, each
// announcing its reply to a Telegram chat of the fake Bot API, where the replies are counted.
import type { FakeTelegramServer } from "../test/fakes/fake-telegram-server.js";

/** The hook token every gateway of the bench shares (the same config on every gateway). */
const HOOK_TOKEN = "cluster-bench-hook-token-0123456789";
const FIRST_CHAT = 5_000;

/** The hooks part of the gateways' config: sessions named by the request, so turns spread over a fixed set. */
export const hooksConfig = { enabled: true, token: HOOK_TOKEN, allowRequestSessionKey: true };

/** One webhook turn: its text `<word> <i>` finds its reply at the fake; `sessionKey` its session. */
export interface HookTurn {
  word: string;
  i: number;
  sessionKey: string;
  /** the Telegram chat its reply is announced to */
  chat: number;
}

/** Turn `i` of `word` over `sessions` sessions (`agent:main:hook:<word>-<i % sessions>`, a chat each). */
export function hookTurn(word: string, i: number, sessions: number): HookTurn {
  const session = i % sessions;
  return { word, i, sessionKey: `agent:main:hook:${word}-${session}`, chat: FIRST_CHAT + session };
}

/** Posts one turn to `port`; resolves with the HTTP status (0: no answer within `timeoutMs`, or the connection failed). */
export async function postTurn(port: number, turn: HookTurn, timeoutMs = 30_000) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/hooks/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${HOOK_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        message: `${turn.word} ${turn.i}`,
        sessionKey: turn.sessionKey,
        to: `telegram:${turn.chat}`,
        idempotencyKey: `${turn.word}-${turn.i}`,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** What posting a load saw: turns refused on a first try (then sent again), by status. */
export interface Posted {
  /** ms from the first post to the last 202 */
  acceptedMs: number;
  retried: Map<number, number>;
}

/**
 * Posts turns 0..count-1 (`inFlight` at a time), turn i to `ports[i % ports.length]`; a turn answered
 * with anything but 202 is sent again (same idempotency key) after 20 ms, up to 50 times.
 */
export async function postLoad(
  ports: number[],
  load: { word: string; count: number; sessions: number; inFlight: number },
): Promise<Posted> {
  const started = performance.now();
  const retried = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < load.count; i = next++) {
      for (let attempt = 1; ; attempt++) {
        const status = await postTurn(ports[i % ports.length]!, hookTurn(load.word, i, load.sessions));
        if (status === 202) break;
        retried.set(status, (retried.get(status) ?? 0) + 1);
        if (attempt >= 50) throw new Error(`turn ${i} to port ${ports[i % ports.length]}: HTTP ${status} 50 times`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: load.inFlight }, worker));
  return { acceptedMs: performance.now() - started, retried };
}

/** The numbers of the replies to turns of `word` the fake has received so far, by reply count. */
function repliesOf(fake: FakeTelegramServer, word: string): Map<number, number> {
  const pattern = new RegExp(`\\b${word} (\\d+)\\b`);
  const seen = new Map<number, number>();
  for (const sent of fake.sent) {
    const n = pattern.exec(sent.text)?.[1];
    if (n !== undefined) seen.set(Number(n), (seen.get(Number(n)) ?? 0) + 1);
  }
  return seen;
}

/** Resolves with performance.now() once the fake holds a reply to each of `count` turns of `word` (checked every 5 ms). */
export async function repliesReached(
  fake: FakeTelegramServer,
  word: string,
  count: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let from = 0;
  const answered = new Set<string>();
  const pattern = new RegExp(`\\b${word} (\\d+)\\b`);
  while (answered.size < count) {
    for (; from < fake.sent.length; from++) {
      const n = pattern.exec(fake.sent[from]!.text)?.[1];
      if (n !== undefined) answered.add(n);
    }
    if (answered.size >= count) break;
    if (performance.now() > deadline) throw new Error(`only ${answered.size} of ${count} "${word}" replies in time`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now();
}

/** Missing or repeated replies to turns 0..count-1 of `word`. */
export function replyProblems(fake: FakeTelegramServer, word: string, count: number): string[] {
  const seen = repliesOf(fake, word);
  const problems: string[] = [];
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length) problems.push(`${missing.length} "${word}" turns unanswered (first: ${missing[0]})`);
  const twice = [...seen.values()].filter((n) => n > 1).length;
  if (twice) problems.push(`${twice} "${word}" turns answered more than once`);
  return problems;
}
