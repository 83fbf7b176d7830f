// A fake Discord on 127.0.0.1 for the real discord.js client: the REST API under /api/v10
// (./discord/rest-routes.ts: gateway info, channels, messages with nonce dedupe and the
// 2000-character limit, DMs, typing, application commands, interaction callbacks and webhooks) and
// the gateway on the same port (./fake-discord-gateway.ts: sessions, RESUME with replay, a count of
// second connections). Its world (one guild, two people) is ./discord/world.ts.
// Tests dispatch MESSAGE_CREATE and INTERACTION_CREATE (./discord/inbound-payloads.ts) and read what the bot sent.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { inboundPayloads } from "./discord/inbound-payloads.js";
import { createInteractionCalls } from "./discord/interaction-calls.js";
import { type FakeDiscordFailure, createMessagePosts } from "./discord/message-posts.js";
import { createRestRoutes } from "./discord/rest-routes.js";
import { DISCORD_BOT, type FakeDiscordBot, WORLD, guildCreate } from "./discord/world.js";
import { serveFakeGateway } from "./fake-discord-gateway.js";

export type { FakeDiscordFailure } from "./discord/message-posts.js";
export { DISCORD_BOT, type FakeDiscordBot, WORLD, dmChannelOf } from "./discord/world.js";

/** Options of {@link startFakeDiscord}. */
export interface FakeDiscordOptions {
  bots?: FakeDiscordBot[];
  /** close the gateway with 4014 when the Message Content intent is asked for */
  refuseMessageContent?: boolean;
  /** a message post is recorded at once and answered this much later (a window to kill the client in) */
  sendDelayMs?: number;
  /** the gateway's session expiry: how long a session without a connection stays resumable, on which clock */
  sessions?: { ttlMs?: number; now?: () => number };
  /** listen on this port (a test restarting Discord where a client was refused a connection) */
  port?: number;
}

/** REST answering `status` (to the paths ending with `only`, else to all) while set; how many requests it answered so. */
interface Outage {
  status?: number | undefined;
  only?: string | undefined;
  answered: number;
}

/** The HTTP server of the fake, with the sockets it holds open. */
function restServer(route: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>, outage: Outage) {
  const server = http.createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "";
    if (outage.status !== undefined && path.startsWith("/api/") && (!outage.only || path.endsWith(outage.only))) {
      outage.answered++;
      res.writeHead(outage.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "Discord is away", code: 0 }));
      return;
    }
    route(req, res).catch((err: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: String(err), code: 0 }));
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return { server, sockets };
}

/** Starts the fake; `close()` ends every socket and the server. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}) {
  const bots = options.bots ?? [DISCORD_BOT];
  let nextId = 100_000_000_000_000_000n;
  const newId = () => String(nextId++);
  const posts = createMessagePosts({ newId, ...(options.sendDelayMs && { sendDelayMs: options.sendDelayMs }) });
  const calls = createInteractionCalls({ newId, sent: posts.sent });
  const gatewayUrl = () => `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rest = createRestRoutes({ bots, posts, calls, gatewayUrl });
  const outage: Outage = { answered: 0 };
  const { server, sockets } = restServer(rest.route, outage);
  const gateway = serveFakeGateway(server, {
    bots,
    guildId: WORLD.guild,
    guildCreate,
    ...(options.refuseMessageContent && { refuseMessageContent: true }),
    ...(options.sessions?.ttlMs !== undefined && { sessionTtlMs: options.sessions.ttlMs }),
    ...(options.sessions?.now && { now: options.sessions.now }),
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}/api`,
    sent: posts.sent,
    interactions: calls.interactions,
    commandPuts: rest.commandPuts,
    typing: rest.typing,
    /** the retry-after seconds of every 429 the fake answered */
    rateLimits: posts.rateLimits,
    /** Sends a gateway event to every session of `bot` (its connection, or kept for a RESUME). */
    dispatch: (t: string, d: unknown, bot: FakeDiscordBot = bots[0]!) => gateway.dispatch(t, d, bot),
    ...inboundPayloads({ newId, bot: bots[0]!, interactionChannels: calls.channels }),
    /** the next message posts fail, in order */
    failNext(...next: FakeDiscordFailure[]) {
      posts.failures.push(...next);
    },
    /** the next message post is answered 429 with this retry-after */
    rateLimitNext(seconds: number) {
      posts.failures.push({ status: 429, code: 0, message: "You are being rate limited.", retryAfterSeconds: seconds });
    },
    /** every REST request (or those whose path ends with `only`, e.g. "/users/@me") is answered `status` (a 5xx: Discord away) until {@link restUp} */
    restDown(status = 502, only?: string) {
      Object.assign(outage, { status, only });
    },
    /** the REST requests answered by an outage so far */
    outageAnswered: () => outage.answered,
    restUp() {
      outage.status = undefined;
    },
    blockDms(userId: string) {
      posts.blockedDms.add(userId);
    },
    expireInteraction(id: string) {
      calls.expired.add(id);
    },
    /** message posts Discord dropped because their nonce was seen before */
    nonceRepeats: posts.nonceRepeats,
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
    openConnections: () => sockets.size,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A started fake as {@link startFakeDiscord} returns it. */
export type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;
