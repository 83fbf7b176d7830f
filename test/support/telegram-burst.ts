// A burst of Telegram DMs through the fake Bot API and what became of it: the scenario of the
// durability tests that kill the gateway (or its database) mid-burst, checked one way everywhere.
import type { FakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { adaDm } from "../fakes/fake-telegram-server.js";

/** Pushes `count` DMs from Ada ("burst 1", "burst 2", ... by default) to the fake; returns their texts in order. */
export function pushBurst(fake: FakeTelegramServer, count: number, prefix = "burst"): string[] {
  const burst = Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}`);
  for (const [i, text] of burst.entries()) fake.push(adaDm(text, i + 1));
  return burst;
}

/** What a fake platform recorded of the replies: each text and the chat it went to (Telegram's own `sent`, or a view of another's). */
export interface SentLog {
  sent: ReadonlyArray<{ text: string; chatId: string }>;
}

/** How often each text reached the user. */
function replyCounts(fake: SentLog): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sent of fake.sent) counts.set(sent.text, (counts.get(sent.text) ?? 0) + 1);
  return counts;
}

/** Whether every message of `burst` has its echo (the offline model's "Echo: <text>"). */
export function burstAnswered(fake: SentLog, burst: string[]): boolean {
  const counts = replyCounts(fake);
  return burst.every((text) => counts.has(`Echo: ${text}`));
}

/** What the user saw of a burst: messages never answered, echoes that arrived more than once, and whether the first answers kept the burst's order. */
export function burstOutcome(
  fake: SentLog,
  burst: string[],
): { missing: string[]; repeated: Array<[string, number]>; inOrder: boolean } {
  const counts = replyCounts(fake);
  const firstSeen = burst.map((text) => fake.sent.findIndex((s) => s.text === `Echo: ${text}`));
  return {
    missing: burst.filter((text) => !counts.has(`Echo: ${text}`)),
    repeated: [...counts].filter(([, n]) => n > 1),
    inOrder: firstSeen.every((at, i) => i === 0 || at > firstSeen[i - 1]!),
  };
}
