// The REST API of the fake Discord under /api/v10 (../fake-discord-server.ts): gateway info,
// channels, message posts (./message-posts.ts), typing, the bot's own user, DMs, application
// commands, and the interaction callback and webhook (./interaction-calls.ts). Every route but the
// interaction ones needs a known bot's token (401 otherwise).
import type http from "node:http";
import type { createInteractionCalls } from "./interaction-calls.js";
import type { MessagePosts } from "./message-posts.js";
import { type Reply, readJson, replyTo } from "./reply.js";
import { type FakeDiscordBot, KNOWN_CHANNELS, dmChannelOf } from "./world.js";

/** What the routes serve from. */
interface RestDeps {
  bots: FakeDiscordBot[];
  posts: MessagePosts;
  calls: ReturnType<typeof createInteractionCalls>;
  /** the gateway's URL, given in `GET /gateway/bot` */
  gatewayUrl: () => string;
}

/** One request as the routes see it. */
interface RestRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  /** the bot whose token came, else the first (interaction routes need none) */
  self: FakeDiscordBot;
  reply: Reply;
}

/** The answer to `PUT .../commands`: the commands as Discord stores them. */
function storedCommands(self: FakeDiscordBot, body: unknown) {
  const list = (body as { name: string }[] | undefined) ?? [];
  return list.map((c, i) => ({
    id: String(1000 + i),
    application_id: self.applicationId,
    version: "1",
    type: 1,
    default_member_permissions: null,
    ...c,
  }));
}

/** `POST /users/@me/channels`: the DM channel with the recipient. */
function dmChannel(body: Record<string, unknown> | undefined) {
  const userId = String(body?.recipient_id);
  return {
    id: dmChannelOf(userId),
    type: 1,
    last_message_id: null,
    recipients: [{ id: userId, username: `user${userId.slice(-3)}`, discriminator: "0", avatar: null }],
  };
}

/** The REST routes of one fake, and what they recorded besides messages and interactions. */
export function createRestRoutes(deps: RestDeps) {
  const commandPuts: { path: string; body: unknown }[] = [];
  const typing: string[] = [];

  /** The routes besides message posts: method (any when undefined), path pattern, handler. */
  const table: Array<[string | undefined, RegExp, (r: RestRequest, m: RegExpExecArray) => void]> = [
    [
      "GET",
      /^\/gateway\/bot$/,
      ({ reply }) => {
        const limit = { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 };
        reply(200, { url: deps.gatewayUrl(), shards: 1, session_start_limit: limit });
      },
    ],
    [
      "GET",
      /^\/channels\/(\d+)$/,
      ({ reply }, m) => {
        const channel = KNOWN_CHANNELS[m[1]!];
        if (channel) reply(200, channel);
        else reply(404, { message: "Unknown Channel", code: 10003 });
      },
    ],
    [
      "POST",
      /^\/channels\/(\d+)\/typing$/,
      ({ reply }, m) => {
        typing.push(m[1]!);
        reply(204);
      },
    ],
    [
      "GET",
      /^\/users\/@me$/,
      ({ self, reply }) => reply(200, { ...self.user, discriminator: "0", avatar: null, bot: true }),
    ],
    ["POST", /^\/users\/@me\/channels$/, ({ body, reply }) => reply(200, dmChannel(body))],
    [
      "PUT",
      /^\/applications\/\d+(\/guilds\/\d+)?\/commands$/,
      ({ path, body, self, reply }) => {
        commandPuts.push({ path, body });
        reply(200, storedCommands(self, body));
      },
    ],
    [
      "POST",
      /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      ({ body, reply }, m) => deps.calls.callback(m[1]!, body, reply),
    ],
    [
      undefined,
      /^\/webhooks\/\d+\/([^/]+)(\/messages\/@original)?$/,
      ({ method, body, self, reply }, m) => deps.calls.webhook(method, m[1]!.replace(/^token-/, ""), body, self, reply),
    ],
  ];

  /** Serves a request by the table; false when no route matched. */
  function other(request: RestRequest): boolean {
    for (const [method, pattern, serve] of table) {
      const m = method === undefined || method === request.method ? pattern.exec(request.path) : null;
      if (!m) continue;
      serve(request, m);
      return true;
    }
    return false;
  }

  /** Serves one REST request. */
  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, "");
    const method = req.method ?? "GET";
    const body = await readJson(req);
    const reply = replyTo(res);
    const bot = deps.bots.find((b) => req.headers.authorization === `Bot ${b.token}`);
    const isWebhook = path.startsWith("/webhooks/") || path.startsWith("/interactions/");
    if (!bot && !isWebhook) return reply(401, { message: "401: Unauthorized", code: 0 });
    const self = bot ?? deps.bots[0]!;
    const posted = method === "POST" ? /^\/channels\/(\d+)\/messages$/.exec(path) : null;
    if (posted) {
      const answered = await deps.posts.handle(self, posted[1]!, body, reply);
      if (answered === "disconnect") res.destroy();
      return;
    }
    if (!other({ method, path, body, self, reply })) reply(404, { message: "404: Not Found", code: 0 });
  }

  return { route, commandPuts, typing };
}
