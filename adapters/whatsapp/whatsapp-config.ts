import { z } from "zod";
import {
  channelSectionSchema,
  type AccountSettingsOf,
  ReplyToModeSchema,
  SHARED_ACCOUNT_DEFAULTS,
  groupRuleFields,
  sharedAccountFields,
} from "../../src/index.js";

const whatsappAccountShape = {
  ...sharedAccountFields,
  /** linked-device credentials; `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>` when not set */
  authDir: z.string().trim().min(1).optional(),
  /** per group JID (or "*") */
  groups: z.record(z.string(), z.strictObject(groupRuleFields)).optional(),
  /** the bot answers in your own "message yourself" chat */
  selfChatMode: z.boolean().optional(),
  sendReadReceipts: z.boolean().optional(),
  /** replies quote the message they answer (first piece only, every piece, or never) */
  replyToMode: ReplyToModeSchema.optional(),
  textChunkLimit: z.number().int().min(100).max(65_536).optional(),
  /** deprecated: read as `session.queue.channels.whatsapp` `{ mode: "collect", debounceMs }` when above 0 (a warning at start) */
  debounceMs: z.number().int().min(0).optional(),
};

/** `channels.whatsapp` (no tokens: each account links as a device and keeps its `authDir`). */
export const WhatsAppConfigSchema = channelSectionSchema(whatsappAccountShape);

/** `channels.whatsapp` as validated. */
export type WhatsAppConfig = z.infer<typeof WhatsAppConfigSchema>;

/** One WhatsApp account's settings, every default applied. */
export type WhatsAppSettings = AccountSettingsOf<WhatsAppConfig, "authDir">;

/** The config half of the WhatsApp channel: its schema, defaults and per-account fields. */
export const whatsappConfig = {
  id: "whatsapp",
  schema: WhatsAppConfigSchema,
  defaults: {
    ...SHARED_ACCOUNT_DEFAULTS,
    authDir: undefined,
    groups: {},
    selfChatMode: false,
    sendReadReceipts: true,
    replyToMode: "first",
    textChunkLimit: 4000,
    debounceMs: 0,
  } satisfies WhatsAppSettings as WhatsAppSettings,
  perAccountFields: ["authDir"],
} as const;
