import { z } from "zod";
import { AccountIdSchema, AllowListSchema, RetrySchema, accessFields } from "./schema/access.js";

/** The fields of one account the core reads on every channel: on or off, who may talk, how sends retry. */
export interface SharedAccountSettings {
  enabled: boolean;
  dmPolicy: "allowlist" | "pairing" | "open" | "disabled";
  pairing: { codeTtlSeconds: number; maxPending: number };
  allowFrom: string[];
  groupPolicy: "allowlist" | "open" | "disabled";
  groupAllowFrom: string[];
  commandAllowFrom: string[];
  owners: string[];
  /** who owns the account: its `owners` list, or the explicit entries of `allowFrom` when no `owners` is set */
  ownersFrom: "owners" | "allowFrom";
  retry: z.infer<typeof RetrySchema>;
}

/**
 * How the delivery gate retries a failed send that can succeed later (network trouble, 5xx, 429):
 * with exponential backoff from `minDelayMs` up to `maxDelayMs`, for up to `maxAgeMs` after the
 * message was handed over (12 hours), across restarts. Every channel's default, and the gate's for
 * channels without a config section (the web chat).
 */
export const DEFAULT_RETRY: SharedAccountSettings["retry"] = {
  attempts: undefined,
  minDelayMs: 500,
  maxDelayMs: 30_000,
  maxAgeMs: 12 * 60 * 60 * 1000,
};

/** The shared fields' defaults, which every channel's `defaults` spread: nobody is let in. */
export const SHARED_ACCOUNT_DEFAULTS: SharedAccountSettings = {
  enabled: true,
  dmPolicy: "allowlist",
  // Codes live an hour; three may wait for an owner at once.
  pairing: { codeTtlSeconds: 3600, maxPending: 3 },
  allowFrom: [],
  groupPolicy: "allowlist",
  groupAllowFrom: [],
  commandAllowFrom: [],
  owners: [],
  ownersFrom: "allowFrom",
  retry: DEFAULT_RETRY,
};

/** Defaults of a group's rules (a Telegram or WhatsApp group, a Discord guild) and of its topics or channels. */
export const GROUP_DEFAULTS = {
  /** in a group the bot answers only when mentioned or replied to, unless the group's rule says otherwise */
  requireMention: true,
} as const;

/** The schema fields of the shared settings, for a channel's own account shape (`...sharedAccountFields`). */
export const sharedAccountFields = {
  enabled: z.boolean().optional(),
  ...accessFields,
  retry: RetrySchema.optional(),
};

/**
 * `channels.<id>` built from one account's fields: the default account's at the top level, every
 * other account's under `accounts.<id>`; both strict, so a typo is named with its path.
 */
export function channelSectionSchema<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject({ ...shape, accounts: z.record(AccountIdSchema, z.strictObject(shape)).optional() });
}

/** The rules of one group (and of its topics or channels) the core's access reads on every channel. */
export const groupRuleFields = {
  /** true by default in groups: the bot answers only when mentioned or replied to */
  requireMention: z.boolean().optional(),
  /** who may talk here; the account's groupAllowFrom when not set */
  allowFrom: AllowListSchema.optional(),
};

/**
 * The config half of a channel (the rest, `create` and `login`, is in src/delivery/channel-adapter.ts):
 * what the config loader needs to compose and check `channels.<id>`, and what the account-settings
 * resolver needs to complete one account's settings.
 */
export interface ChannelConfigDefinition<Settings extends SharedAccountSettings = SharedAccountSettings> {
  /** the channel's name in `channels.<id>`, session keys and targets, e.g. "telegram" */
  readonly id: string;
  /** `channels.<id>`: a strict object (the default account's fields at the top level, others under `accounts`) */
  readonly schema: z.ZodType;
  /** every per-account field's value when neither the account nor the channel sets it */
  readonly defaults: Settings;
  /** fields that belong to one account (a token, a device folder): other accounts never inherit them from the top level */
  readonly perAccountFields: readonly string[];
  /** the field holding per-group rules (default "groups"; Discord calls its groups "guilds") */
  readonly groupsKey?: string;
}

/** A channel section without its definition: the shared fields checked, every other field kept as written. */
const sharedSection = z.looseObject({
  ...sharedAccountFields,
  accounts: z.record(AccountIdSchema, z.looseObject(sharedAccountFields)).optional(),
});

/** Which definition validated a section; a section parsed without a table has none. */
const definitions = new WeakMap<object, ChannelConfigDefinition>();

/** The definition whose schema validated this `channels.<id>` section, if the config was loaded with a table. */
export function definitionOf(section: object): ChannelConfigDefinition | undefined {
  return definitions.get(section);
}

/**
 * `channels`: with a table, a strict object of the table's channels (an unknown channel or key is
 * named with a did-you-mean); without one (unit tests of the core), any channel id with its shared
 * fields checked.
 */
export function channelsSchema(table?: readonly ChannelConfigDefinition[]): z.ZodType<Channels> {
  if (!table) return z.record(z.string(), sharedSection.optional());
  const shape: Record<string, z.ZodType> = {};
  for (const channel of table) {
    shape[channel.id] = channel.schema
      .transform((section) => {
        if (typeof section === "object" && section !== null) definitions.set(section, channel);
        return section;
      })
      .optional();
  }
  return z.strictObject(shape) as unknown as z.ZodType<Channels>;
}

/** `channels.<id>` as validated: the default account's fields at the top level, others under `accounts`. */
export type ChannelSection = z.infer<typeof sharedSection>;

/** `channels` as validated: each configured channel's section by its id. */
type Channels = Record<string, ChannelSection | undefined>;

/** The fields one account of a section may set: everything but `accounts`. */
type AccountFieldsOf<Section> = Omit<Section, "accounts">;

/**
 * One account's complete settings, typed from its channel's section: every field present, those
 * without a default (`Open`: tokens, paths) possibly `undefined`.
 */
export type AccountSettingsOf<Section, Open extends keyof AccountFieldsOf<Section> = never> = Required<
  Omit<AccountFieldsOf<Section>, Open>
> & { [K in Open]: AccountFieldsOf<Section>[K] | undefined } & Pick<SharedAccountSettings, "ownersFrom">;
