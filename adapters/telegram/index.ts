// The Telegram adapter (grammy): everything the wiring and the tests use.
export { createTelegramAdapter } from "./telegram-adapter.js";
export { toInbound } from "./to-inbound.js";
export { markdownToTelegramHtml } from "./markdown-to-html.js";
export { resolveTelegramAccounts } from "./telegram-accounts.js";
export { offsetFilePath } from "./offset-store.js";
