// What a test dispatches on the fake Discord's gateway (../fake-discord-server.ts): MESSAGE_CREATE
// payloads in the guild or a DM, and INTERACTION_CREATE for a slash command, shaped as Discord sends them.
import { type FakeDiscordBot, KNOWN_CHANNELS, WORLD, dmChannelOf, isoNow, plainMessage } from "./world.js";

/** The payload builders of one fake: ids from `newId`; each slash command's channel kept in `interactionChannels`. */
export function inboundPayloads(deps: {
  newId: () => string;
  bot: FakeDiscordBot;
  interactionChannels: Map<string, string>;
}) {
  const { newId } = deps;

  /** A MESSAGE_CREATE payload in the guild's #general from Ada; fields override. */
  function message(over: Record<string, unknown> = {}) {
    return {
      id: newId(),
      channel_id: WORLD.general,
      guild_id: WORLD.guild,
      author: { ...WORLD.ada, discriminator: "0", avatar: null },
      member: { roles: [], joined_at: isoNow(), deaf: false, mute: false, flags: 0, nick: null },
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
    deps.interactionChannels.set(id, channelId);
    return {
      id,
      application_id: deps.bot.applicationId,
      type: 2,
      token: `token-${id}`,
      version: 1,
      channel_id: channelId,
      channel: inGuild
        ? (KNOWN_CHANNELS[channelId] ?? { id: channelId, type: 0, guild_id: WORLD.guild })
        : { id: channelId, type: 1 },
      ...(inGuild
        ? {
            guild_id: WORLD.guild,
            member: { user, roles: [], permissions: "0", joined_at: isoNow(), deaf: false, mute: false, flags: 0 },
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

  return { message, dm, slash };
}
