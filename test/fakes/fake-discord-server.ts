// A fake Discord on 127.0.0.1 for the real discord.js client: the REST API under /api/v10 (gateway
// info, channels, messages with nonce dedupe and the 2000-character limit, DMs, typing, application
// commands, interaction callbacks and webhooks) and the gateway on the same port (./fake-discord-gateway.ts:
// sessions, RESUME with replay, a count of second connections).
// Tests dispatch MESSAGE_CREATE and INTERACTION_CREATE and read what the bot sent.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveFakeGateway } from "./fake-discord-gateway.js";

/** A bot the fake knows. */
export interface FakeDiscordBot {
  token: string;
  user: { id: string; username: string };
  applicationId: string;
}

/** The default bot. */
export const DISCORD_BOT: FakeDiscordBot = {
  token: "MTIz.fake-discord.token",
  user: { id: "900000000000000001", username: "switchboard" },
  applicationId: "900000000000000002",
};

/** Ids of the fake's world: one guild with a channel, a thread in it, a locked channel, and two people. */
export const WORLD = {
  guild: "800000000000000001",
  general: "700000000000000001",
  thread: "700000000000000002",
  locked: "700000000000000004",
  ada: { id: "600000000000000001", username: "ada", global_name: "Ada" },
  bob: { id: "600000000000000002", username: "bob", global_name: "Bob" },
  otherBot: { id: "600000000000000009", username: "otherbot", global_name: null, bot: true },
} as const;

/** The DM channel id the fake opens for a user. */
export const dmChannelOf = (userId: string) => `5${userId.slice(1)}`;

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

/** What the bot did with an interaction. */
interface FakeInteractionCall {
  interactionId: string;
  kind: "defer" | "reply" | "edit" | "delete" | "followup";
  content?: string;
  ephemeral: boolean;
}

/** A scripted REST failure: a status with a Discord error body, or a dropped connection. */
export type FakeDiscordFailure =
  | { status: number; code: number; message: string; retryAfterSeconds?: number }
  | "disconnect";

/** Options of {@link startFakeDiscord}. */
export interface FakeDiscordOptions {
  bots?: FakeDiscordBot[];
  /** close the gateway with 4014 when the Message Content intent is asked for */
  refuseMessageContent?: boolean;
  /** a message post is recorded at once and answered this much later (a window to kill the client in) */
  sendDelayMs?: number;
  /** the gateway's session expiry: how long a session without a connection stays resumable, on which clock */
  sessions?: { ttlMs?: number; now?: () => number };
}

const EPHEMERAL = 1 << 6;
const now = () => new Date().toISOString();

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
}

function guildCreate(bot: FakeDiscordBot) {
  const channel = (id: string, name: string, extra: object = {}) => ({
    id,
    type: 0,
    guild_id: WORLD.guild,
    name,
    position: 0,
    permission_overwrites: [],
    ...extra,
  });
  return {
    id: WORLD.guild,
    name: "Fake Guild",
    owner_id: WORLD.ada.id,
    unavailable: false,
    member_count: 3,
    large: false,
    joined_at: now(),
    icon: null,
    features: [],
    // @everyone may view channels and send messages and send in threads.
    roles: [
      {
        id: WORLD.guild,
        name: "@everyone",
        permissions: String(1024 + 2048 + 274877906944),
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    channels: [
      channel(WORLD.general, "general"),
      channel(WORLD.locked, "locked", {
        permission_overwrites: [{ id: WORLD.guild, type: 0, allow: "0", deny: "2048" }],
      }),
    ],
    threads: [
      {
        id: WORLD.thread,
        type: 11,
        guild_id: WORLD.guild,
        parent_id: WORLD.general,
        name: "bug-triage",
        owner_id: WORLD.ada.id,
        thread_metadata: { archived: false, auto_archive_duration: 60, archive_timestamp: now(), locked: false },
      },
    ],
    members: [{ user: { ...bot.user, bot: true }, roles: [], joined_at: now(), deaf: false, mute: false, flags: 0 }],
    presences: [],
    voice_states: [],
    emojis: [],
    stickers: [],
  };
}

/** The fields of a message without mentions, attachments or embeds, sent now (a fresh object each time). */
function plainMessage() {
  return {
    timestamp: now(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: 0,
  };
}

/** Starts the fake; `close()` ends every socket and the server. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}) {
  const bots = options.bots ?? [DISCORD_BOT];
  const sent: FakeDiscordSent[] = [];
  const interactions: FakeInteractionCall[] = [];
  const commandPuts: { path: string; body: unknown }[] = [];
  const typing: string[] = [];
  const rateLimits: number[] = [];
  const failures: FakeDiscordFailure[] = [];
  const blockedDms = new Set<string>();
  const expiredInteractions = new Set<string>();
  const nonces = new Map<string, FakeDiscordSent>();
  let nonceRepeats = 0;
  const interactionChannels = new Map<string, string>();
  let nextId = 100_000_000_000_000_000n;
  const newId = () => String(nextId++);

  const botOf = (auth: string | undefined) => bots.find((b) => auth === `Bot ${b.token}`);
  const messageJson = (bot: FakeDiscordBot, m: FakeDiscordSent) => ({
    id: m.id,
    channel_id: m.channelId,
    author: { ...bot.user, discriminator: "0", global_name: null, avatar: null, bot: true },
    content: m.content,
    ...plainMessage(),
    type: m.referenceId ? 19 : 0,
    ...(m.nonce && { nonce: m.nonce }),
  });

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
      id: newId(),
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

  const knownChannels: Record<string, object> = {
    [WORLD.general]: { id: WORLD.general, type: 0, guild_id: WORLD.guild, name: "general" },
    [WORLD.thread]: {
      id: WORLD.thread,
      type: 11,
      guild_id: WORLD.guild,
      parent_id: WORLD.general,
      name: "bug-triage",
    },
    [WORLD.locked]: { id: WORLD.locked, type: 0, guild_id: WORLD.guild, name: "locked" },
  };

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, "");
    const method = req.method ?? "GET";
    const body = await readJson(req);
    const reply = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
      // An empty body must come without a JSON content type: discord.js would try to parse it.
      res.writeHead(status, json === undefined ? headers : { "content-type": "application/json", ...headers });
      res.end(json === undefined ? "" : JSON.stringify(json));
    };
    const bot = botOf(req.headers.authorization);
    const isWebhook = path.startsWith("/webhooks/") || path.startsWith("/interactions/");
    if (!bot && !isWebhook) return reply(401, { message: "401: Unauthorized", code: 0 });
    const self = bot ?? bots[0]!;
    if (method === "GET" && path === "/gateway/bot") {
      const { port } = server.address() as AddressInfo;
      return reply(200, {
        url: `ws://127.0.0.1:${port}`,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    let m: RegExpExecArray | null;
    m = method === "POST" ? /^\/channels\/(\d+)\/messages$/.exec(path) : null;
    if (m) {
      const failure = failures.shift();
      if (failure === "disconnect") return void res.destroy();
      if (failure) {
        const headers: Record<string, string> = {};
        if (failure.retryAfterSeconds !== undefined) {
          rateLimits.push(failure.retryAfterSeconds);
          Object.assign(headers, {
            "retry-after": String(failure.retryAfterSeconds),
            "x-ratelimit-scope": "user",
            "x-ratelimit-limit": "5",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset-after": String(failure.retryAfterSeconds),
            "x-ratelimit-bucket": "fake-bucket",
          });
        }
        return reply(
          failure.status,
          {
            message: failure.message,
            code: failure.code,
            ...(failure.retryAfterSeconds !== undefined && { retry_after: failure.retryAfterSeconds, global: false }),
          },
          headers,
        );
      }
      const channelId = m[1]!;
      const dmOf = [...blockedDms].find((user) => dmChannelOf(user) === channelId);
      if (dmOf) return reply(403, { message: "Cannot send messages to this user", code: 50007 });
      if (channelId === WORLD.locked) return reply(403, { message: "Missing Permissions", code: 50013 });
      if (!knownChannels[channelId] && !channelId.startsWith("5"))
        return reply(404, { message: "Unknown Channel", code: 10003 });
      const content = String(body?.content ?? "");
      if (content.length > 2000 || !content.trim())
        return reply(400, { message: "Invalid Form Body", code: 50035, errors: { content: "length 1-2000" } });
      const posted = post(self, channelId, body ?? {});
      if (options.sendDelayMs) await new Promise((resolve) => setTimeout(resolve, options.sendDelayMs));
      return reply(200, posted);
    }
    m = method === "GET" ? /^\/channels\/(\d+)$/.exec(path) : null;
    if (m) {
      const channel = knownChannels[m[1]!];
      return channel ? reply(200, channel) : reply(404, { message: "Unknown Channel", code: 10003 });
    }
    m = method === "POST" ? /^\/channels\/(\d+)\/typing$/.exec(path) : null;
    if (m) {
      typing.push(m[1]!);
      return reply(204);
    }
    if (method === "POST" && path === "/users/@me/channels") {
      const userId = String(body?.recipient_id);
      return reply(200, {
        id: dmChannelOf(userId),
        type: 1,
        last_message_id: null,
        recipients: [{ id: userId, username: `user${userId.slice(-3)}`, discriminator: "0", avatar: null }],
      });
    }
    if (method === "PUT" && /^\/applications\/\d+(\/guilds\/\d+)?\/commands$/.test(path)) {
      commandPuts.push({ path, body });
      const list = (body as unknown as { name: string }[] | undefined) ?? [];
      return reply(
        200,
        list.map((c, i) => ({
          id: String(1000 + i),
          application_id: self.applicationId,
          version: "1",
          type: 1,
          default_member_permissions: null,
          ...c,
        })),
      );
    }
    m = method === "POST" ? /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path) : null;
    if (m) {
      const id = m[1]!;
      if (expiredInteractions.has(id)) return reply(404, { message: "Unknown interaction", code: 10062 });
      const data = (body?.data ?? {}) as { content?: string; flags?: number };
      const ephemeral = ((data.flags ?? 0) & EPHEMERAL) !== 0;
      interactions.push({
        interactionId: id,
        kind: body?.type === 5 ? "defer" : "reply",
        ephemeral,
        ...(data.content !== undefined && { content: data.content }),
      });
      if (body?.type === 4 && !ephemeral && data.content)
        sent.push({ channelId: interactionChannels.get(id) ?? "", content: data.content, id: newId() });
      return reply(204);
    }
    m = /^\/webhooks\/\d+\/([^/]+)(\/messages\/@original)?$/.exec(path);
    if (m) {
      const id = m[1]!.replace(/^token-/, "");
      const channelId = interactionChannels.get(id) ?? "";
      const content = body?.content === undefined ? undefined : String(body.content);
      const ephemeral = ((Number(body?.flags ?? 0) & EPHEMERAL) !== 0) as boolean;
      if (method === "DELETE") {
        interactions.push({ interactionId: id, kind: "delete", ephemeral: false });
        return reply(204);
      }
      const kind = method === "PATCH" ? "edit" : "followup";
      interactions.push({ interactionId: id, kind, ephemeral, ...(content !== undefined && { content }) });
      const message: FakeDiscordSent = { channelId, content: content ?? "", id: newId() };
      if (kind === "followup" && !ephemeral) sent.push(message);
      return reply(200, { ...messageJson(self, message), type: 20, webhook_id: self.applicationId });
    }
    return reply(404, { message: "404: Not Found", code: 0 });
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: String(err), code: 0 }));
    });
  });
  const httpSockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    httpSockets.add(socket);
    socket.on("close", () => httpSockets.delete(socket));
  });
  const gateway = serveFakeGateway(server, {
    bots,
    guildId: WORLD.guild,
    guildCreate,
    ...(options.refuseMessageContent && { refuseMessageContent: true }),
    ...(options.sessions?.ttlMs !== undefined && { sessionTtlMs: options.sessions.ttlMs }),
    ...(options.sessions?.now && { now: options.sessions.now }),
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  /** Sends a gateway event to every session of `bot` (its connection, or kept for a RESUME). */
  const dispatch = (t: string, d: unknown, bot: FakeDiscordBot = bots[0]!) => gateway.dispatch(t, d, bot);

  /** A MESSAGE_CREATE payload in the guild's #general from Ada; fields override. */
  function message(over: Record<string, unknown> = {}) {
    return {
      id: newId(),
      channel_id: WORLD.general,
      guild_id: WORLD.guild,
      author: { ...WORLD.ada, discriminator: "0", avatar: null },
      member: { roles: [], joined_at: now(), deaf: false, mute: false, flags: 0, nick: null },
      content: "",
      ...plainMessage(),
      ...over,
    };
  }

  /** A DM from `user` (Ada by default): no guild, `channel_type` 1 so discord.js takes the uncached channel. */
  function dm(content: string, user: { id: string; username: string } = WORLD.ada) {
    const {
      guild_id: _guild,
      member: _member,
      ...rest
    } = message({
      channel_id: dmChannelOf(user.id),
      author: { ...user, discriminator: "0", avatar: null },
      content,
    });
    return { ...rest, channel_type: 1 };
  }

  /** An INTERACTION_CREATE for `/name input` typed by `user` in `channelId` (a guild channel by default). */
  function slash(name: string, input: string | undefined, over: { user?: object; channelId?: string } = {}) {
    const id = newId();
    const user = { discriminator: "0", avatar: null, ...(over.user ?? WORLD.ada) };
    const channelId = over.channelId ?? WORLD.general;
    const inGuild = channelId.startsWith("7");
    interactionChannels.set(id, channelId);
    const bot = bots[0]!;
    return {
      id,
      application_id: bot.applicationId,
      type: 2,
      token: `token-${id}`,
      version: 1,
      channel_id: channelId,
      channel: inGuild
        ? (knownChannels[channelId] ?? { id: channelId, type: 0, guild_id: WORLD.guild })
        : { id: channelId, type: 1 },
      ...(inGuild
        ? {
            guild_id: WORLD.guild,
            member: { user, roles: [], permissions: "0", joined_at: now(), deaf: false, mute: false, flags: 0 },
          }
        : { user }),
      data: {
        id: "1000",
        name,
        type: 1,
        ...(input !== undefined && { options: [{ name: "input", type: 3, value: input }] }),
      },
      app_permissions: "0",
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": WORLD.guild },
      context: inGuild ? 0 : 1,
    };
  }

  return {
    apiRoot: `http://127.0.0.1:${port}/api`,
    sent,
    interactions,
    commandPuts,
    typing,
    /** the retry-after seconds of every 429 the fake answered */
    rateLimits,
    dispatch,
    message,
    dm,
    slash,
    /** the next message posts fail, in order */
    failNext(...next: FakeDiscordFailure[]) {
      failures.push(...next);
    },
    /** the next message post is answered 429 with this retry-after */
    rateLimitNext(seconds: number) {
      failures.push({ status: 429, code: 0, message: "You are being rate limited.", retryAfterSeconds: seconds });
    },
    blockDms(userId: string) {
      blockedDms.add(userId);
    },
    expireInteraction(id: string) {
      expiredInteractions.add(id);
    },
    /** message posts Discord dropped because their nonce was seen before */
    nonceRepeats: () => nonceRepeats,
    /** open gateway connections (identified or not) */
    connections: gateway.connections,
    /** every IDENTIFY and RESUME the gateway accepted, in order, with when */
    logins: gateway.logins,
    /** IDENTIFYs of the bot accepted while another of its connections was open */
    secondConnections: gateway.secondConnections,
    /** calls a listener at each step of every gateway connection (./fake-discord-gateway.ts) */
    onStep: gateway.onStep,
    interruptNextResume: gateway.interruptNextResume,
    closeCodes: gateway.closeCodes,
    dropConnections: gateway.dropConnections,
    failNextConnections: gateway.failNextConnections,
    /** every connection a client holds open: REST (keep-alive) and gateway */
    openConnections: () => httpSockets.size,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A started fake as {@link startFakeDiscord} returns it. */
export type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;
