// The Discord adapter (discord.js): everything the wiring and the tests use.
export { createDiscordAdapter } from "./discord-adapter.js";
export { toInbound } from "./to-inbound.js";
export { commandToInbound } from "./command-to-inbound.js";
export type { DiscordMessageEvent } from "./message-shape.js";
export { cleanToken, resolveDiscordAccounts } from "./discord-accounts.js";
export { discordTargets, parseDiscordTarget } from "./discord-target.js";
export { splitMessage } from "./split-text.js";
