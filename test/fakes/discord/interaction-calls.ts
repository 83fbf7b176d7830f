// Interactions on the fake Discord (../fake-discord-server.ts): the callback (`POST
// /interactions/:id/:token/callback`: a defer or a reply, 404 once expired) and the interaction
// webhook (`/webhooks/:app/:token[/messages/@original]`: edit, delete, follow-up). A reply or
// follow-up that is not ephemeral is also a message in the interaction's channel.
import { type FakeDiscordSent, messageJson } from "./message-posts.js";
import type { Reply } from "./reply.js";
import type { FakeDiscordBot } from "./world.js";

/** What the bot did with an interaction. */
interface FakeInteractionCall {
  interactionId: string;
  kind: "defer" | "reply" | "edit" | "delete" | "followup";
  content?: string;
  ephemeral: boolean;
}

const EPHEMERAL = 1 << 6;

/** The interactions of one fake; non-ephemeral answers go to `sent`. */
export function createInteractionCalls(deps: { newId: () => string; sent: FakeDiscordSent[] }) {
  const interactions: FakeInteractionCall[] = [];
  const expired = new Set<string>();
  /** the channel each interaction the fake made was typed in */
  const channels = new Map<string, string>();
  return {
    interactions,
    expired,
    channels,
    /** The interaction callback of interaction `id`. */
    callback(id: string, body: Record<string, unknown> | undefined, reply: Reply) {
      if (expired.has(id)) return reply(404, { message: "Unknown interaction", code: 10062 });
      const data = (body?.data ?? {}) as { content?: string; flags?: number };
      const ephemeral = ((data.flags ?? 0) & EPHEMERAL) !== 0;
      interactions.push({
        interactionId: id,
        kind: body?.type === 5 ? "defer" : "reply",
        ephemeral,
        ...(data.content !== undefined && { content: data.content }),
      });
      if (body?.type === 4 && !ephemeral && data.content)
        deps.sent.push({ channelId: channels.get(id) ?? "", content: data.content, id: deps.newId() });
      return reply(204);
    },
    /** The interaction webhook of interaction `id` (its token is `token-<id>`), answered as `bot`. */
    webhook(method: string, id: string, body: Record<string, unknown> | undefined, bot: FakeDiscordBot, reply: Reply) {
      const channelId = channels.get(id) ?? "";
      const content = body?.content === undefined ? undefined : String(body.content);
      const ephemeral = ((Number(body?.flags ?? 0) & EPHEMERAL) !== 0) as boolean;
      if (method === "DELETE") {
        interactions.push({ interactionId: id, kind: "delete", ephemeral: false });
        return reply(204);
      }
      const kind = method === "PATCH" ? "edit" : "followup";
      interactions.push({ interactionId: id, kind, ephemeral, ...(content !== undefined && { content }) });
      const message: FakeDiscordSent = { channelId, content: content ?? "", id: deps.newId() };
      if (kind === "followup" && !ephemeral) deps.sent.push(message);
      return reply(200, { ...messageJson(bot, message), type: 20, webhook_id: bot.applicationId });
    },
  };
}
