// The core's public index: adapters (adapters/) import from here and nowhere else, so this file is the
// whole surface an adapter may rely on. Export by name; a new adapter need means a new named export.

// Errors: the one family (src/errors.ts). Adapters throw DeliveryError from send, config problems as SwitchboardError.
export { DeliveryError, ErrorCodes, SwitchboardError } from "./errors.js";

// Logging: every adapter takes the structured logger in its deps.
export type { Logger } from "./logger.js";

// Configuration: the validated config, and the shared pieces a channel's own schema and defaults are built from.
export type { AccountSettingsOf, Config, SharedAccountSettings } from "./config/index.js";
// (from their own modules, not the config index: that one builds the whole config schema when loaded)
export { AccountIdSchema, AllowListSchema, ReplyToModeSchema } from "./config/schema/access.js";
export {
  SHARED_ACCOUNT_DEFAULTS,
  channelSectionSchema,
  groupRuleFields,
  sharedAccountFields,
} from "./config/channel-table.js";

// The adapter contract (src/delivery/channel-adapter.ts): what an adapter implements and hands to the core.
export type {
  AccountHealth,
  AdapterStartContext,
  ChannelAccountState,
  ChannelAdapter,
  ChannelCapabilities,
  ChannelDefinition,
  ChannelDeps,
  ChannelLogin,
  ChannelLoginRequest,
  CommandInteraction,
  HandOff,
  InboundSink,
  OutboundMessage,
  TargetCodec,
} from "./delivery/channel-adapter.js";

// Inbound messages and account ids: what an adapter builds from a platform event.
export { InboundMessageSchema, type InboundMessage } from "./routing/inbound-message.js";
export { DEFAULT_ACCOUNT_ID, normalizeAccountId } from "./routing/normalize.js";

// Delivery targets: where a session's replies go, as stored on its entry.
export type { DeliveryContext } from "./sessions/session-entry.js";

// Atomic state files (an earlier version's Telegram offset is moved aside with a file stamp).
export { fileStamp, writeFileAtomic } from "./state/atomic-json-file.js";

// The channel state: an adapter's durable rows (offsets, device credentials) on the gateway's backend.
export type { ChannelRows, ChannelState } from "./state/channel-state.js";

// Chunking by length and lines with code fences kept whole, for answers that bypass the delivery gate
// (Discord's interaction follow-ups).
export { chunkText } from "./delivery/chunk-text.js";

/**
 * The command table's names and summaries, for native command menus (Telegram setMyCommands,
 * Discord slash commands). Loaded on first use: the table brings every command and the agent
 * runtime, which a CLI command that only reads the config (and so the channel table) must not load.
 */
export async function nativeCommandMenu(): Promise<Array<{ name: string; summary: string }>> {
  const { COMMAND_LIST } = await import("./commands/command-table.js");
  return COMMAND_LIST.map((command) => ({ name: command.name, summary: command.summary }));
}
// One account's complete settings (account over channel over defaults), and the accounts a channel section lists.
export {
  accountConfigPath,
  channelAccountIds,
  resolveAccountSettings,
  skipsBareDefault,
} from "./delivery/account-settings.js";

// The multi-account skeleton every platform adapter is built on: running map, start/stop, routing, limits.
export { type AccountAdapter, createAccountAdapter } from "./delivery/account-adapter.js";
