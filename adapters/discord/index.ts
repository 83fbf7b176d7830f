// The Discord adapter (discord.js): everything the wiring and the tests use.
export { type DiscordAdapter, type DiscordAdapterDeps, createDiscordAdapter } from "./discord-adapter.js";
export { type DiscordBotUser, type ToInboundOptions, toInbound } from "./to-inbound.js";
export { type DiscordCommandEvent, commandToInbound } from "./command-to-inbound.js";
export type { DiscordMessageEvent, DiscordPlace } from "./message-shape.js";
export { type DiscordAccount, type DiscordConfig, cleanToken, resolveDiscordAccounts } from "./discord-accounts.js";
export { type DiscordTarget, discordTargets, parseDiscordTarget } from "./discord-target.js";
export { toDeliveryError } from "./discord-errors.js";
export { type NativeCommand, toSlashCommands } from "./slash-commands.js";
export { splitMessage } from "./split-text.js";
export { DISCORD_INTENTS } from "./account-client.js";
