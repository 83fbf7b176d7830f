// `POST /channels/:id/messages` of the fake Discord (../fake-discord-server.ts): scripted failures
// and 429s first, then Discord's refusals (a blocked DM, a locked or unknown channel, an empty or
// over-2000-character text), then the post, deduplicated by `nonce` with `enforce_nonce`.
import type { Reply } from "./reply.js";
import { type FakeDiscordBot, KNOWN_CHANNELS, WORLD, dmChannelOf, plainMessage } from "./world.js";

/** A message the bot posted (channel messages and interaction follow-ups alike). */
export interface FakeDiscordSent {
  channelId: string;
  content: string;
  id: string;
  referenceId?: string;
  nonce?: string;
  /** the bot user that posted it */
  by?: string;
  /** the `allowed_mentions.parse` the bot sent: which mentions in the text may notify */
  pings?: string[];
}

/** A scripted REST failure: a status with a Discord error body, or a dropped connection. */
export type FakeDiscordFailure =
  | { status: number; code: number; message: string; retryAfterSeconds?: number }
  | "disconnect";

/** The message object Discord answers for `m`, posted by `bot`. */
export function messageJson(bot: FakeDiscordBot, m: FakeDiscordSent) {
  return {
    id: m.id,
    channel_id: m.channelId,
    author: { ...bot.user, discriminator: "0", global_name: null, avatar: null, bot: true },
    content: m.content,
    ...plainMessage(),
    type: m.referenceId ? 19 : 0,
    ...(m.nonce && { nonce: m.nonce }),
  };
}

/** The headers and body of a scripted failure. */
function failureAnswer(failure: Exclude<FakeDiscordFailure, "disconnect">) {
  const retry = failure.retryAfterSeconds;
  const headers: Record<string, string> =
    retry === undefined
      ? {}
      : {
          "retry-after": String(retry),
          "x-ratelimit-scope": "user",
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(retry),
          "x-ratelimit-bucket": "fake-bucket",
        };
  const body = {
    message: failure.message,
    code: failure.code,
    ...(retry !== undefined && { retry_after: retry, global: false }),
  };
  return { headers, body };
}

/** The message posts of one fake: what was sent, and the failures and blocks scripted for the next ones. */
export function createMessagePosts(deps: { newId: () => string; sendDelayMs?: number }) {
  const sent: FakeDiscordSent[] = [];
  const rateLimits: number[] = [];
  const failures: FakeDiscordFailure[] = [];
  const blockedDms = new Set<string>();
  const nonces = new Map<string, FakeDiscordSent>();
  let nonceRepeats = 0;

  function post(bot: FakeDiscordBot, channelId: string, body: Record<string, unknown>) {
    const nonce = typeof body.nonce === "string" ? body.nonce : undefined;
    const seen = nonce && body.enforce_nonce ? nonces.get(nonce) : undefined;
    if (seen) {
      nonceRepeats++;
      return messageJson(bot, seen);
    }
    const reference = body.message_reference as { message_id?: string } | undefined;
    const message: FakeDiscordSent = {
      channelId,
      content: String(body.content ?? ""),
      id: deps.newId(),
      by: bot.user.id,
      ...(reference?.message_id && { referenceId: reference.message_id }),
      ...(nonce && { nonce }),
      ...(body.allowed_mentions !== undefined && {
        pings: (body.allowed_mentions as { parse?: string[] }).parse ?? [],
      }),
    };
    sent.push(message);
    if (nonce) nonces.set(nonce, message);
    return messageJson(bot, message);
  }

  /** Discord's refusal of a post to `channelId`, if any. */
  function refusal(channelId: string, content: string): [number, object] | undefined {
    const dmOf = [...blockedDms].find((user) => dmChannelOf(user) === channelId);
    if (dmOf) return [403, { message: "Cannot send messages to this user", code: 50007 }];
    if (channelId === WORLD.locked) return [403, { message: "Missing Permissions", code: 50013 }];
    if (!KNOWN_CHANNELS[channelId] && !channelId.startsWith("5"))
      return [404, { message: "Unknown Channel", code: 10003 }];
    if (content.length > 2000 || !content.trim())
      return [400, { message: "Invalid Form Body", code: 50035, errors: { content: "length 1-2000" } }];
    return undefined;
  }

  return {
    sent,
    rateLimits,
    failures,
    blockedDms,
    nonceRepeats: () => nonceRepeats,
    /** Serves a post of `bot` to `channelId`; "disconnect" when the connection is to be dropped. */
    async handle(bot: FakeDiscordBot, channelId: string, body: Record<string, unknown> | undefined, reply: Reply) {
      const failure = failures.shift();
      if (failure === "disconnect") return "disconnect" as const;
      if (failure) {
        if (failure.retryAfterSeconds !== undefined) rateLimits.push(failure.retryAfterSeconds);
        const { headers, body: json } = failureAnswer(failure);
        return reply(failure.status, json, headers);
      }
      const refused = refusal(channelId, String(body?.content ?? ""));
      if (refused) return reply(...refused);
      const posted = post(bot, channelId, body ?? {});
      if (deps.sendDelayMs) await new Promise((resolve) => setTimeout(resolve, deps.sendDelayMs));
      return reply(200, posted);
    },
  };
}

/** The message posts of a fake. */
export type MessagePosts = ReturnType<typeof createMessagePosts>;
