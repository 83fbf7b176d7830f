// The core's public index: adapters import from here and nowhere else.
export * from "./errors.js";
export * from "./logger.js";
export * from "./config/index.js";
export * from "./routing/index.js";
export * from "./delivery/index.js";
export { fileStamp } from "./sessions/atomic-json-file.js";
// For adapters: delivery targets, atomic state files (Telegram offsets), the command table (native command menus).
export type { DeliveryContext } from "./sessions/session-entry.js";
export { writeFileAtomic } from "./sessions/atomic-json-file.js";
export { COMMAND_LIST } from "./commands/command-table.js";
// For adapters: one account's complete settings (account over channel over defaults).
export { channelAccountIds, resolveAccountSettings } from "./inbound/channel-settings.js";
