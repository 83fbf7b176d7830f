// Traffic for the cluster tests: Telegram DMs into many chats through the fake Bot API and webhook
// turns POSTed round-robin to every gateway, and what each chat saw of it (checked per chat as
// telegram-burst.ts checks one chat: every reply there, once, in order, in its own chat).
import type { FakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import { rawRequest } from "./raw-gateway.js";
import { type SentLog, burstOutcome } from "./telegram-burst.js";

/** Each chat's messages, in the order they were sent (chat ids as numbers, or strings where they do not fit one). */
export type ChatTraffic = Map<number | string, string[]>;

/**
 * Pushes `perChat` DMs into each of `chats` chats (ids from `firstChat`), round by round, so chats
 * interleave; `after` (the traffic pushed before into the same chats) goes on with the rounds after it.
 */
export function pushChats(
  fake: FakeTelegramServer,
  chats: number,
  perChat: number,
  firstChat = 1001,
  after?: ChatTraffic,
): ChatTraffic {
  const traffic: ChatTraffic = new Map(after);
  const firstRound = (after?.get(firstChat)?.length ?? 0) + 1;
  for (let round = firstRound; round < firstRound + perChat; round++)
    for (let chat = firstChat; chat < firstChat + chats; chat++) {
      const text = `chat ${chat} message ${round}`;
      traffic.set(chat, [...(traffic.get(chat) ?? []), text]);
      fake.push(adaDm(text, round, chat));
    }
  return traffic;
}

/** Whether every message of every chat has its echo. */
export function chatsAnswered(fake: SentLog, traffic: ChatTraffic): boolean {
  const echoes = new Set(fake.sent.map((s) => s.text));
  return [...traffic.values()].every((texts) => texts.every((text) => echoes.has(`Echo: ${text}`)));
}

/** What the chats saw: messages never answered, echoes that arrived more than once, chats whose first answers broke order, echoes sent to another chat. */
export function chatsOutcome(
  fake: SentLog,
  traffic: ChatTraffic,
): { missing: string[]; repeated: Array<[string, number]>; outOfOrder: Array<number | string>; misrouted: string[] } {
  const chatOf = new Map([...traffic].flatMap(([chat, texts]) => texts.map((text) => [`Echo: ${text}`, chat])));
  const missing: string[] = [];
  const outOfOrder: Array<number | string> = [];
  for (const [chat, texts] of traffic) {
    const outcome = burstOutcome(fake, texts);
    missing.push(...outcome.missing);
    if (!outcome.inOrder) outOfOrder.push(chat);
  }
  // burstOutcome's repeats are of everything sent: this traffic's echoes only, once.
  const repeated = burstOutcome(fake, []).repeated.filter(([text]) => chatOf.has(text));
  const misrouted = fake.sent.filter((s) => chatOf.has(s.text) && String(chatOf.get(s.text)) !== s.chatId);
  return { missing, repeated, outOfOrder, misrouted: misrouted.map((s) => `${s.text} -> ${s.chatId}`) };
}

/**
 * POSTs `perChat` webhook turns for each of `chats` chats (ids from `firstChat`), each in a session
 * of its own chat (`sessionKey: hook:chat-<id>`) delivering to it, the n-th request to gateway
 * `ports[n % ports.length]`; one chat's turns one after the other (each stored, 202, before the
 * next), the chats at once. Returns the traffic and each request's status and gateway port.
 */
export async function postHookTurns(
  ports: number[],
  token: string,
  options: { chats: number; perChat: number; firstChat: number },
): Promise<{ traffic: ChatTraffic; answers: Array<{ port: number; status: number; body: unknown }> }> {
  const traffic: ChatTraffic = new Map();
  const answers: Array<{ port: number; status: number; body: unknown }> = [];
  let next = 0;
  const chats = Array.from({ length: options.chats }, (_, i) => options.firstChat + i);
  await Promise.all(
    chats.map(async (chat) => {
      for (let turn = 1; turn <= options.perChat; turn++) {
        const message = `hook ${chat} turn ${turn}`;
        traffic.set(chat, [...(traffic.get(chat) ?? []), message]);
        const port = ports[next++ % ports.length]!;
        const body = JSON.stringify({ message, sessionKey: `hook:chat-${chat}`, to: `telegram:${chat}` });
        const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
        const answer = await rawRequest(port, { method: "POST", path: "/hooks/agent", headers, body });
        answers.push({ port, status: answer.status, body: answer.body });
      }
    }),
  );
  return { traffic, answers };
}
