// The world of the fake Discord (../fake-discord-server.ts): its bots, one guild with a channel, a
// thread and a locked channel, two people and another bot, and the payload shapes Discord sends
// for them (GUILD_CREATE, a channel, a plain message's fields).

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

/** Now, as Discord writes timestamps. */
export const isoNow = () => new Date().toISOString();

/** The guild's channels as `GET /channels/:id` answers them. */
export const KNOWN_CHANNELS: Readonly<Record<string, object>> = {
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

/** The GUILD_CREATE the gateway sends `bot` after READY. */
export function guildCreate(bot: FakeDiscordBot) {
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
    joined_at: isoNow(),
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
        thread_metadata: { archived: false, auto_archive_duration: 60, archive_timestamp: isoNow(), locked: false },
      },
    ],
    members: [{ user: { ...bot.user, bot: true }, roles: [], joined_at: isoNow(), deaf: false, mute: false, flags: 0 }],
    presences: [],
    voice_states: [],
    emojis: [],
    stickers: [],
  };
}

/** The fields of a message without mentions, attachments or embeds, sent now (a fresh object each time). */
export function plainMessage() {
  return {
    timestamp: isoNow(),
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
