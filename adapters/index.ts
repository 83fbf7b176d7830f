import { COMMAND_LIST, type ChannelAdapter, type Config, type Logger } from "../src/index.js";
import { createDiscordAdapter } from "./discord/index.js";
import { createTelegramAdapter } from "./telegram/index.js";
// The WhatsApp modules named one by one: whatsapp/index.ts would load baileys for every CLI command.
import { createWhatsAppAdapter } from "./whatsapp/whatsapp-adapter.js";
import type { WhatsAppSocketFactory } from "./whatsapp/whatsapp-socket.js";

/** What the adapters need from the process edge (the CLI entry passes its own values). */
export interface ConfiguredAdapterDeps {
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the user's home directory, for `~/` in token files */
  homeDir?: string;
  /** the process environment (tokens such as TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** default: the real baileys socket; tests pass a fake built on baileys' event emitter */
  whatsappSocket?: WhatsAppSocketFactory;
}

/**
 * The channel adapters the config turns on (Telegram, Discord and WhatsApp, each when its
 * `channels.<name>` section is present and not disabled), for `startGateway({ adapters })`. The top-level entry, so `src/` never
 * imports an adapter: `bin/switchboard` hands this factory to the CLI.
 */
export function createConfiguredAdapters(config: Config, deps: ConfiguredAdapterDeps): ChannelAdapter[] {
  const adapters: ChannelAdapter[] = [];
  const commands = config.commands.native ? COMMAND_LIST.map((c) => ({ name: c.name, summary: c.summary })) : [];
  const telegram = config.channels.telegram;
  if (telegram && telegram.enabled !== false) {
    adapters.push(
      createTelegramAdapter(telegram, {
        home: deps.home,
        env: deps.env,
        logger: deps.logger,
        commands,
        ...(deps.homeDir && { homeDir: deps.homeDir }),
      }),
    );
  }
  const discord = config.channels.discord;
  if (discord && discord.enabled !== false)
    adapters.push(createDiscordAdapter(discord, { env: deps.env, logger: deps.logger, commands }));
  const whatsapp = config.channels.whatsapp;
  if (whatsapp && whatsapp.enabled !== false) {
    adapters.push(
      createWhatsAppAdapter(whatsapp, {
        home: deps.home,
        logger: deps.logger,
        ...(deps.whatsappSocket && { socketFactory: deps.whatsappSocket }),
      }),
    );
  }
  return adapters;
}
