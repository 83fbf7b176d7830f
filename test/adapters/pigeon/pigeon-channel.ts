// The fourth channel, whole, as an adapter author writes one: its config (schema, defaults,
// per-account fields, groups named "rooms"), its adapter on createAccountAdapter, its target codec
// and its mapping. It imports only src/index.ts, like every adapter in adapters/.
import { z } from "zod";
import {
  channelSectionSchema,
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
import { PigeonError, type PigeonEvent, type PigeonPlatform } from "./pigeon-platform.js";

const pigeonAccountShape = {
  ...sharedAccountFields,
  /** secret: the bot's token on the platform */
  token: z.string().min(1).optional(),
  /** per room id (or "*") */
  rooms: z.record(z.string(), z.strictObject(groupRuleFields)).optional(),
  textChunkLimit: z.number().int().min(100).max(1000).optional(),
};

/** `channels.pigeon`. */
const PigeonConfigSchema = channelSectionSchema(pigeonAccountShape);
type PigeonConfig = z.infer<typeof PigeonConfigSchema>;
type PigeonSettings = AccountSettingsOf<PigeonConfig, "token">;

const pigeonConfig = {
  id: "pigeon",
  schema: PigeonConfigSchema,
  defaults: { ...SHARED_ACCOUNT_DEFAULTS, token: undefined, rooms: {}, textChunkLimit: 1000 } as PigeonSettings,
  perAccountFields: ["token"],
  groupsKey: "rooms",
} as const;

const TARGET = /^(user|room):[A-Za-z0-9_-]+$/;

/** `user:<id>` and `room:<id>`: the text after `pigeon:` is the chat itself. */
const pigeonTargets: TargetCodec = {
  encode: (target) => target.to ?? "",
  decode(text) {
    if (!TARGET.test(text))
      throw new DeliveryError(`"${text}" is not a Pigeon target: write user:<id> or room:<id>`, {
        retryable: false,
        reason: "bad_target",
      });
    return { channel: "pigeon", to: text };
  },
};

/** A platform event as the core's message; the bot's own messages are dropped. */
export function pigeonToInbound(event: PigeonEvent, accountId: string, botId: string): InboundMessage | null {
  if (event.from.id === botId || !event.text.trim()) return null;
  const room = event.chat.startsWith("room:");
  return {
    channel: "pigeon",
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
  if (err instanceof PigeonError && err.status === 429)
    return new DeliveryError("Pigeon: too many posts", {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: err.retryAfterMs ?? 1000,
    });
  if (err instanceof PigeonError && err.status === 404)
    return new DeliveryError("Pigeon: no such chat", { retryable: false, reason: "chat_not_found" });
  return new DeliveryError(`Pigeon: ${(err as Error).message}`, { retryable: true, reason: "network" });
}

interface PigeonAccount {
  accountId: string;
  token: string;
  settings: PigeonSettings;
}

/** The Pigeon adapter: one platform connection per account with a token. */
export function createPigeonAdapter(
  section: PigeonConfig,
  platform: PigeonPlatform,
  bots: Record<string, string>,
  logger: Logger,
) {
  const accounts = (): PigeonAccount[] =>
    channelAccountIds(section)
      .map((accountId) => ({ accountId, settings: resolveAccountSettings(pigeonConfig, section, accountId) }))
      .filter((a) => a.settings.enabled && a.settings.token !== undefined)
      .map((a) => ({ ...a, token: a.settings.token! }));
  return createAccountAdapter({
    channel: pigeonConfig,
    section,
    name: "Pigeon",
    capabilities: { typing: false, nativeCommands: false, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit }),
    targets: pigeonTargets,
    logger,
    accounts,
    async startAccount(account, sink) {
      const connection = platform.connect(account.token, (event) => {
        const message = pigeonToInbound(event, account.accountId, bots[account.token]!);
        if (message) sink(message).catch((err) => logger.warn({ err }, "pigeon message not stored"));
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

/** The Pigeon channel for a table: `[...CHANNELS, createPigeonChannel(platform, bots)]`. */
export function createPigeonChannel(
  platform: PigeonPlatform,
  bots: Record<string, string>,
): ChannelDefinition<PigeonSettings, PigeonConfig> {
  return {
    ...pigeonConfig,
    create: (section, deps) => createPigeonAdapter(section, platform, bots, deps.logger),
  };
}
