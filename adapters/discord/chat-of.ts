import type { InboundMessage } from "../../src/index.js";
import type { DiscordPlace } from "./message-shape.js";

/** Discord's channel types that matter here. */
export const ChannelKinds = { DM: 1, GROUP_DM: 3, THREADS: new Set([10, 11, 12]) } as const;

/** `#general` for a channel, `#general › bug-triage` for a thread, the name of a group DM. */
function titleOf(place: DiscordPlace | undefined, isThread: boolean): string | undefined {
  if (!place?.name) return undefined;
  if (place.type === ChannelKinds.GROUP_DM) return place.name;
  return isThread && place.parentName ? `#${place.parentName} › ${place.name}` : `#${place.name}`;
}

/**
 * The chat of a message or command: guild channels and threads are `channel` (keyed by their own
 * id, with the guild for bindings; a thread names its parent, whose rules apply to it), a group DM
 * is `group`, anything else without a guild is a DM (`direct`, keyed by the author).
 */
export function chatOf(channelId: string, guildId: string | undefined, place: DiscordPlace | undefined) {
  const isThread = place !== undefined && ChannelKinds.THREADS.has(place.type) && place.parentId !== undefined;
  const title = titleOf(place, isThread);
  const chat: InboundMessage["chat"] = {
    type: guildId ? "channel" : place?.type === ChannelKinds.GROUP_DM ? "group" : "direct",
    id: channelId,
    ...(guildId && { guildId }),
    ...(title !== undefined && { title }),
    ...(isThread && { parentId: place.parentId }),
  };
  return chat;
}
