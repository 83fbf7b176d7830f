// The fourth channel, whole, as an adapter author writes one: its config (schema, defaults,
// per-account fields, groups named "rooms"), its adapter on createAccountAdapter, its target codec
// and its mapping. It imports only src/index.ts, like every adapter in adapters/.
import { z } from "zod";
import {
  AccountIdSchema,
  type AccountSettingsOf,
  type ChannelDefinition,
  DeliveryError,
  type InboundMessage,
  type Logger,
  SHARED_ACCOUNT_DEFAULTS,
  type TargetCodec,
  channelAccountIds,
  createAccountAdapter,
  groupRuleFields,
  resolveAccountSettings,
  sharedAccountFields,
} from "../../../src/index.js";
import { RelayError, type RelayEvent, type RelayPlatform } from "./relay-platform.js";

const relayAccountShape = {
  ...sharedAccountFields,
  /** secret: the bot's token on the platform */
  token: z.string().min(1).optional(),
  /** per room id (or "*") */
  rooms: z.record(z.string(), z.strictObject(groupRuleFields)).optional(),
  textChunkLimit: z.number().int().min(100).max(1000).optional(),
};

/** `channels.relay`. */
const RelayConfigSchema = z.strictObject({
  ...relayAccountShape,
  accounts: z.record(AccountIdSchema, z.strictObject(relayAccountShape)).optional(),
});
type RelayConfig = z.infer<typeof RelayConfigSchema>;
type RelaySettings = AccountSettingsOf<RelayConfig, "token">;

const relayConfig = {
  id: "relay",
  schema: RelayConfigSchema,
  defaults: { ...SHARED_ACCOUNT_DEFAULTS, token: undefined, rooms: {}, textChunkLimit: 1000 } as RelaySettings,
  perAccountFields: ["token"],
  groupsKey: "rooms",
} as const;

const TARGET = /^(user|room):[A-Za-z0-9_-]+$/;

/** `user:<id>` and `room:<id>`: the text after `relay:` is the chat itself. */
const relayTargets: TargetCodec = {
  encode: (target) => target.to ?? "",
  decode(text) {
    if (!TARGET.test(text))
      throw new DeliveryError(`"${text}" is not a Relay target: write user:<id> or room:<id>`, {
        retryable: false,
        reason: "bad_target",
      });
    return { channel: "relay", to: text };
  },
};

/** A platform event as the core's message; the bot's own messages are dropped. */
export function relayToInbound(event: RelayEvent, accountId: string, botId: string): InboundMessage | null {
  if (event.from.id === botId || !event.text.trim()) return null;
  const room = event.chat.startsWith("room:");
  return {
    channel: "relay",
    accountId,
    chat: { type: room ? "group" : "direct", id: event.chat },
    sender: { id: event.from.id, ...(event.from.name && { name: event.from.name }) },
    messageId: event.id,
    text: event.text,
    timestamp: event.at,
    wasMentioned: event.mentioned === true,
    raw: event,
  };
}

/** A platform failure as the gate's DeliveryError. */
function deliveryErrorOf(err: unknown): DeliveryError {
  if (err instanceof RelayError && err.status === 429)
    return new DeliveryError("Relay: too many posts", {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: err.retryAfterMs ?? 1000,
    });
  if (err instanceof RelayError && err.status === 404)
    return new DeliveryError("Relay: no such chat", { retryable: false, reason: "chat_not_found" });
  return new DeliveryError(`Relay: ${(err as Error).message}`, { retryable: true, reason: "network" });
}

interface RelayAccount {
  accountId: string;
  token: string;
  settings: RelaySettings;
}

/** The Relay adapter: one platform connection per account with a token. */
export function createRelayAdapter(
  section: RelayConfig,
  platform: RelayPlatform,
  bots: Record<string, string>,
  logger: Logger,
) {
  const accounts = (): RelayAccount[] =>
    channelAccountIds(section)
      .map((accountId) => ({ accountId, settings: resolveAccountSettings(relayConfig, section, accountId) }))
      .filter((a) => a.settings.enabled && a.settings.token !== undefined)
      .map((a) => ({ ...a, token: a.settings.token! }));
  return createAccountAdapter({
    channel: relayConfig,
    section,
    name: "Relay",
    capabilities: { typing: false, nativeCommands: false, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit }),
    targets: relayTargets,
    logger,
    accounts,
    async startAccount(account, sink) {
      const connection = platform.connect(account.token, (event) => {
        const message = relayToInbound(event, account.accountId, bots[account.token]!);
        if (message) sink(message).catch((err) => logger.warn({ err }, "relay message not stored"));
      });
      return { account, stop: async () => connection.close() };
    },
    async send(running, target, message) {
      try {
        return { messageIds: [platform.post(running.account.token, target.to ?? "", message.text)] };
      } catch (err) {
        throw deliveryErrorOf(err);
      }
    },
    describe: (running) => running.account.accountId,
  }).adapter;
}

/** The Relay channel for a table: `[...CHANNELS, createRelayChannel(platform, bots)]`. */
export function createRelayChannel(
  platform: RelayPlatform,
  bots: Record<string, string>,
): ChannelDefinition<RelaySettings, RelayConfig> {
  return {
    ...relayConfig,
    create: (section, deps) => createRelayAdapter(section, platform, bots, deps.logger),
  };
}
