import { stripAnyEntryPrefix } from "../config/entry-prefix.js";
import type { Config } from "../config/schema/index.js";
import { channelAccountIds, resolveSharedSettings } from "../delivery/account-settings.js";
import { DEFAULT_ACCOUNT_ID } from "../routing/normalize.js";
import { resolveAccountAccess } from "./channel-account.js";

/** Who may do what on one channel account, as `switchboard doctor` shows it. */
export interface AccountOverview {
  channel: string;
  accountId: string;
  dmPolicy: "allowlist" | "pairing" | "open" | "disabled";
  /** the owners (run every command, talk everywhere the account answers) */
  owners: string[];
  /** `owners` when the list is configured, `allowFrom` when it was taken from there */
  ownersFrom: "owners" | "allowFrom";
  /** command users who are not owners (commands only, no talk) */
  commandUsers: string[];
  /** who may DM the bot: owners, allowFrom entries and command users (a command sent in a DM acts on the DM's session); `*` for everyone */
  dmSenders: string[];
  /** more than one person may DM this account */
  manyDmSenders: boolean;
}

const WILDCARD = /^(?:[a-z]+:)?\*$/i;

/** Entries as people write them, compared without case and channel prefix (`tg:42` and `42` are one). */
function distinct(entries: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const key = stripAnyEntryPrefix(entry);
    if (key && !seen.has(key)) seen.set(key, entry.trim());
  }
  return [...seen.values()];
}

/** The configured, enabled channel accounts: each channel's top-level (`default`) account and its `accounts`. */
export function configuredAccounts(config: Pick<Config, "channels">): Array<{ channel: string; accountId: string }> {
  const result: Array<{ channel: string; accountId: string }> = [];
  for (const [channel, section] of Object.entries(config.channels)) {
    if (!section) continue;
    for (const accountId of channelAccountIds(section)) {
      if (resolveSharedSettings(config, channel, accountId).enabled) result.push({ channel, accountId });
    }
  }
  return result;
}

/** Who may DM, run commands and own each configured account. */
export function accountOverviews(config: Pick<Config, "channels">): AccountOverview[] {
  return configuredAccounts(config).map(({ channel, accountId }) => {
    const access = resolveAccountAccess(config, channel, accountId);
    const owners = distinct(access.owners);
    const listed = access.dmPolicy === "allowlist" || access.dmPolicy === "pairing" ? access.allowFrom : [];
    // Command users count: under dmScope "main" their /status or /context reads the shared session.
    const commanders = access.dmPolicy === "disabled" ? [] : access.commandAllowFrom;
    const senders = access.dmPolicy === "open" ? ["*"] : distinct([...owners, ...listed, ...commanders]);
    const dmSenders = senders.some((entry) => WILDCARD.test(entry)) ? ["*"] : senders;
    const ownerKeys = new Set(owners.map((o) => o.toLowerCase()));
    return {
      channel,
      accountId,
      dmPolicy: access.dmPolicy,
      owners,
      ownersFrom: access.ownersFrom,
      commandUsers: distinct(access.commandAllowFrom).filter((entry) => !ownerKeys.has(entry.toLowerCase())),
      dmSenders,
      // Under pairing, every sender an owner approves joins the ones listed here.
      manyDmSenders: dmSenders.includes("*") || dmSenders.length > 1 || access.dmPolicy === "pairing",
    };
  });
}

/** `telegram` or `telegram (account work)`. */
export function accountLabel(account: Pick<AccountOverview, "channel" | "accountId">): string {
  return account.accountId === DEFAULT_ACCOUNT_ID
    ? account.channel
    : `${account.channel} (account ${account.accountId})`;
}

function whyMany(account: AccountOverview): string {
  if (account.dmPolicy === "open") return `dmPolicy is "open"`;
  if (account.dmPolicy === "pairing") return `dmPolicy is "pairing": every sender an owner approves may DM it`;
  if (account.dmSenders.includes("*")) return `allowFrom has "*"`;
  return `${account.dmSenders.join(", ")} may all DM it`;
}

/**
 * The one warning paragraph for a risky DM setup, or undefined: under `session.dmScope: "main"`
 * every DM lands in one session, so when an account admits more than one DM sender, those people
 * share one conversation (docs/session-keys.md).
 */
export function sharedDmWarning(config: Pick<Config, "channels" | "session">): string | undefined {
  if (config.session.dmScope !== "main" || config.session.scope === "global") return undefined;
  const risky = accountOverviews(config).filter((account) => account.manyDmSenders);
  if (risky.length === 0) return undefined;
  const where = risky.map((account) => `${accountLabel(account)} (${whyMany(account)})`).join("; ");
  return (
    `session.dmScope is "main", so every direct message lands in one shared session, and more than one person may DM ` +
    `${where}. Those people share one conversation: each of them reads what the others said and what the agent answered. ` +
    `Fix: set session: { dmScope: "per-channel-peer" } so each sender gets a DM session of their own.`
  );
}

/**
 * Accounts nobody may DM but their owners (`dmPolicy: "allowlist"` with an empty `allowFrom`), each
 * with the hint that `dmPolicy: "pairing"` lets people in without editing the config.
 */
export function pairingSuggestions(config: Pick<Config, "channels">): string[] {
  return configuredAccounts(config)
    .filter(({ channel, accountId }) => {
      const access = resolveAccountAccess(config, channel, accountId);
      return access.dmPolicy === "allowlist" && access.allowFrom.length === 0;
    })
    .map(
      (account) =>
        `${accountLabel(account)}: allowFrom is empty, so only owners may DM it. To let a new person in without editing the config, ` +
        `set dmPolicy: "pairing": they get a one-time code, and an owner approves it with \`switchboard pairing approve <code>\` or /pair approve <code>.`,
    );
}
