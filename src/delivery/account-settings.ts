import { DEFAULT_ACCOUNT_ID, normalizeAccountId } from "../routing/normalize.js";
import {
  type ChannelConfigDefinition,
  type ChannelSection,
  SHARED_ACCOUNT_DEFAULTS,
  type SharedAccountSettings,
  definitionOf,
} from "../config/channel-table.js";
import type { Config } from "../config/schema/index.js";

/** `*`, `tg:*`, `discord:*`: an entry that means everyone, never one person. */
function isWildcard(entry: string): boolean {
  return /^(?:[a-z]+:)?\*$/i.test(entry.trim());
}

type Fields = Record<string, unknown>;

/** The `accounts.<id>` entry that names `accountId` (ids compare normalized: `Work` is `work`). */
function accountEntry(section: ChannelSection | undefined, accountId: string): Fields | undefined {
  const accounts = (section?.accounts ?? {}) as Record<string, Fields>;
  const wanted = normalizeAccountId(accountId);
  return Object.entries(accounts).find(([id]) => normalizeAccountId(id) === wanted)?.[1];
}

/**
 * One account's settings, complete: each field from the account's own entry, else the channel's
 * top level, else the channel's `defaults`. Per-account fields (tokens, webhooks, device folders)
 * reach only the `default` account from the top level. An account that is not configured gets the
 * channel's values; a channel that is not configured gets the defaults, which let nobody in.
 * Without an `owners` list, the explicit (non-`*`) entries of `allowFrom` own the account;
 * `owners: []` written out means nobody does.
 */
export function resolveAccountSettings<S extends SharedAccountSettings>(
  channel: Pick<ChannelConfigDefinition<S>, "defaults" | "perAccountFields">,
  section: object | undefined,
  accountId: string,
): S {
  const top = (section ?? {}) as Fields;
  const own = accountEntry(section as ChannelSection | undefined, accountId);
  const isDefault = normalizeAccountId(accountId) === DEFAULT_ACCOUNT_ID;
  const perAccount = channel.perAccountFields as readonly string[];
  const settings = { ...channel.defaults } as Fields;
  for (const field of Object.keys(channel.defaults)) {
    const inherited = isDefault || !perAccount.includes(field) ? top[field] : undefined;
    const value = own?.[field] ?? inherited;
    if (value !== undefined) settings[field] = value;
  }
  const ownersSet = (own?.owners ?? top.owners) !== undefined;
  settings.ownersFrom = ownersSet ? "owners" : "allowFrom";
  if (!ownersSet) settings.owners = (settings.allowFrom as string[]).filter((entry) => !isWildcard(entry));
  return settings as S;
}

/** A channel the core knows nothing of: the shared fields, its groups under `groups`. */
const GENERIC: ChannelConfigDefinition<SharedAccountSettings & { groups: Fields }> = {
  id: "",
  schema: undefined as never,
  defaults: { ...SHARED_ACCOUNT_DEFAULTS, groups: {} },
  perAccountFields: [],
};

/**
 * The settings every channel shares (access, retry, `enabled`) for one account, with its per-group
 * rules under `groups` whatever the channel calls them: what the core reads of any channel,
 * configured or not (the web chat has no section and gets the defaults).
 */
export function resolveSharedSettings(
  config: Pick<Config, "channels">,
  channel: string,
  accountId: string,
): SharedAccountSettings & { groups: Fields } {
  const section = config.channels[channel.toLowerCase()];
  const definition = (section && definitionOf(section)) ?? GENERIC;
  const groupsKey = definition.groupsKey ?? "groups";
  const settings = resolveAccountSettings(definition, section, accountId) as SharedAccountSettings & Fields;
  return { ...settings, groups: (settings[groupsKey] as Fields | undefined) ?? {} };
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

/** Where an account's settings live in the config (`channels.<channel>` or `channels.<channel>.accounts.<id>`), for errors that say what to change. */
export function accountConfigPath(channel: string, accountId: string): string {
  return accountId === DEFAULT_ACCOUNT_ID ? `channels.${channel}` : `channels.${channel}.accounts.${accountId}`;
}

/**
 * True when `accountId` is the `default` account (the top level), it has no credential of its own
 * (a token, a device folder) and `accounts` names other accounts but not it: it is not run.
 */
export function skipsBareDefault(
  section: { accounts?: Record<string, unknown> | undefined },
  accountId: string,
  hasCredential: boolean,
): boolean {
  if (accountId !== DEFAULT_ACCOUNT_ID || hasCredential) return false;
  const named = Object.keys(section.accounts ?? {}).map(normalizeAccountId);
  return named.length > 0 && !named.includes(DEFAULT_ACCOUNT_ID);
}
