// The Telegram adapter (grammy): everything the wiring and the tests use.
export { type TelegramAdapter, type TelegramAdapterDeps, createTelegramAdapter } from "./telegram-adapter.js";
export { toInbound } from "./to-inbound.js";
export type { BotInfo } from "./mentions-bot.js";
export { markdownToTelegramHtml } from "./markdown-to-html.js";
export { type TelegramAccount, type TelegramConfig, resolveTelegramAccounts } from "./telegram-accounts.js";
export { type TelegramTarget, GENERAL_TOPIC_ID, parseTelegramTarget } from "./telegram-target.js";
export { toDeliveryError } from "./telegram-errors.js";
export { type NativeCommand, toBotCommands } from "./native-commands.js";
export { offsetFilePath } from "./offset-store.js";
