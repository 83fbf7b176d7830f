import type { ChannelDefinition } from "../../src/index.js";
import { type DiscordConfig, type DiscordSettings, discordConfig } from "./discord-config.js";

/** The Discord channel for the table in adapters/index.ts; discord.js loads only when an adapter is created. */
export const discordChannel: ChannelDefinition<DiscordSettings, DiscordConfig> = {
  ...discordConfig,
  async create(section, deps) {
    const { createDiscordAdapter } = await import("./discord-adapter.js");
    return createDiscordAdapter(section, { env: deps.env, logger: deps.logger, commands: deps.commands });
  },
};
