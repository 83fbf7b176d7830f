import type { ChannelDefinition } from "../../src/index.js";
import { type TelegramConfig, type TelegramSettings, telegramConfig } from "./telegram-config.js";

/** The Telegram channel for the table in adapters/index.ts; grammy loads only when an adapter is created. */
export const telegramChannel: ChannelDefinition<TelegramSettings, TelegramConfig> = {
  ...telegramConfig,
  async create(section, deps) {
    const { createTelegramAdapter } = await import("./telegram-adapter.js");
    return createTelegramAdapter(section, deps);
  },
};
