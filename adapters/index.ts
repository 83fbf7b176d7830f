import {
  type ChannelAdapter,
  type ChannelDefinition,
  type Config,
  type Logger,
  nativeCommandMenu,
} from "../src/index.js";
import { discordChannel } from "./discord/channel.js";
import { telegramChannel } from "./telegram/channel.js";
import { whatsappChannel } from "./whatsapp/channel.js";

/**
 * The channel table: every channel Switchboard knows, each defined whole in its
 * `adapters/<name>/channel.ts`. The config loader checks `channels.<id>` against it, the gateway
 * creates its adapters from it, `switchboard channels login` finds logins in it. A new channel is one
 * more line here and nothing in src/. Loading it loads no platform SDK (each loads in `create`).
 */
export const CHANNELS: readonly ChannelDefinition[] = [telegramChannel, discordChannel, whatsappChannel];

/** What the adapters need from the process edge (the CLI entry passes its own values). */
export interface ConfiguredAdapterDeps {
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the user's home directory, for `~/` in token files */
  homeDir?: string;
  /** the process environment (tokens such as TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
}

/**
 * The adapters of every channel of `table` whose `channels.<id>` section is present and not
 * disabled, for `startGateway({ adapters })`. The top-level entry, so `src/` never imports an
 * adapter: `bin/switchboard` hands this factory to the CLI.
 */
export async function createConfiguredAdapters(
  config: Config,
  deps: ConfiguredAdapterDeps,
  table: readonly ChannelDefinition[] = CHANNELS,
): Promise<ChannelAdapter[]> {
  const commands = config.commands.native ? await nativeCommandMenu() : [];
  const adapters: ChannelAdapter[] = [];
  for (const channel of table) {
    const section = config.channels[channel.id];
    if (section && section.enabled !== false) adapters.push(await channel.create(section, { ...deps, commands }));
  }
  return adapters;
}
