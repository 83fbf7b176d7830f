import type { Client } from "discord.js";
import type { DiscordPlace } from "./message-shape.js";

/**
 * What the client knows about a channel: its type and name, and a thread's parent. A guild channel
 * missing from the cache is fetched once (discord.js caches it then); an uncached DM is unknown.
 */
export async function placeOf(
  client: Client,
  channelId: string | undefined,
  guildId: string | undefined,
): Promise<DiscordPlace | undefined> {
  if (!channelId) return undefined;
  let channel = client.channels.cache.get(channelId);
  if (!channel && guildId) channel = (await client.channels.fetch(channelId).catch(() => null)) ?? undefined;
  if (!channel) return undefined;
  const place: DiscordPlace = { type: channel.type };
  if ("name" in channel && typeof channel.name === "string") place.name = channel.name;
  if (channel.isThread() && channel.parentId) {
    place.parentId = channel.parentId;
    const parent = channel.parent;
    if (parent?.name) place.parentName = parent.name;
  }
  return place;
}
