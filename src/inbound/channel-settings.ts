import {
  CHANNEL_DEFAULTS,
  type ChannelSettingsMap,
  type Config,
  type ConfiguredChannel,
  PER_ACCOUNT_FIELDS,
} from "../config/schema/index.js";
import { DEFAULT_ACCOUNT_ID, normalizeAccountId } from "../routing/normalize.js";

/** `channels.<channel>` as validated: the default account's fields at the top level, others under `accounts`. */
type ChannelSection<C extends ConfiguredChannel> = NonNullable<Config["channels"][C]>;
type Fields<C extends ConfiguredChannel> = Partial<ChannelSettingsMap[C]>;

/** `*`, `tg:*`, `discord:*`: an entry that means everyone, never one person. */
function isWildcard(entry: string): boolean {
  return /^(?:[a-z]+:)?\*$/i.test(entry.trim());
}

/** The `accounts.<id>` entry that names `accountId` (ids compare normalized: `Work` is `work`). */
function accountEntry<C extends ConfiguredChannel>(
  section: ChannelSection<C> | undefined,
  accountId: string,
): Fields<C> | undefined {
  const accounts = (section?.accounts ?? {}) as Record<string, Fields<C>>;
  const wanted = normalizeAccountId(accountId);
  return Object.entries(accounts).find(([id]) => normalizeAccountId(id) === wanted)?.[1];
}

/**
 * One account's settings, complete: each field from the account's own entry, else the channel's
 * top level, else {@link CHANNEL_DEFAULTS}. Per-account fields (tokens, webhooks, device folders)
 * reach only the `default` account from the top level. An account that is not configured gets the
 * channel's values; a channel that is not configured gets the defaults, which let nobody in.
 * Without an `owners` list, the explicit (non-`*`) entries of `allowFrom` own the account;
 * `owners: []` written out means nobody does.
 */
export function resolveAccountSettings<C extends ConfiguredChannel>(
  channel: C,
  section: ChannelSection<C> | undefined,
  accountId: string,
): ChannelSettingsMap[C] {
  const defaults = CHANNEL_DEFAULTS[channel];
  const top = (section ?? {}) as Fields<C>;
  const own = accountEntry(section, accountId);
  const isDefault = normalizeAccountId(accountId) === DEFAULT_ACCOUNT_ID;
  const perAccount = PER_ACCOUNT_FIELDS[channel] as ReadonlyArray<keyof ChannelSettingsMap[C]>;
  const settings = { ...defaults } as ChannelSettingsMap[C];
  for (const field of Object.keys(defaults) as Array<keyof ChannelSettingsMap[C]>) {
    const inherited = isDefault || !perAccount.includes(field) ? top[field] : undefined;
    const value = own?.[field] ?? inherited;
    if (value !== undefined) settings[field] = value as ChannelSettingsMap[C][typeof field];
  }
  const ownersSet = (own?.owners ?? top.owners) !== undefined;
  settings.ownersFrom = ownersSet ? "owners" : "allowFrom";
  if (!ownersSet) settings.owners = settings.allowFrom.filter((entry) => !isWildcard(entry));
  return settings;
}

/** {@link resolveAccountSettings} read from the whole config. */
export function resolveChannelSettings<C extends ConfiguredChannel>(
  config: Pick<Config, "channels">,
  channel: C,
  accountId: string,
): ChannelSettingsMap[C] {
  return resolveAccountSettings(channel, config.channels[channel] as ChannelSection<C> | undefined, accountId);
}

/** True for a channel with a `channels.<name>` section (telegram, discord, whatsapp). */
export function isConfiguredChannel(channel: string): channel is ConfiguredChannel {
  return Object.hasOwn(CHANNEL_DEFAULTS, channel);
}

/**
 * The account ids a channel section names, normalized: `default` (the top level) first, then each
 * `accounts.<id>` in the order written. Callers decide which of them run (`enabled`, a token).
 */
export function channelAccountIds(section: { accounts?: Record<string, unknown> | undefined } | undefined): string[] {
  const ids = new Set([DEFAULT_ACCOUNT_ID]);
  for (const id of Object.keys(section?.accounts ?? {})) ids.add(normalizeAccountId(id));
  return [...ids];
}
