import { type ImportReport, isRecord } from "./import-report.js";

/** Channels Switchboard has adapters for. */
const CHANNELS = ["telegram", "discord", "whatsapp"] as const;
type Channel = (typeof CHANNELS)[number];

/** Account fields that mean the same in both systems, per channel. */
const SAME_FIELDS: Record<Channel, readonly string[]> = {
  telegram: [
    "botToken",
    "tokenFile",
    "webhookUrl",
    "webhookSecret",
    "webhookPath",
    "timeoutSeconds",
    "replyToMode",
    "textChunkLimit",
    "groups",
  ],
  discord: ["token", "guilds", "allowBots", "replyToMode", "textChunkLimit", "maxLinesPerMessage"],
  whatsapp: ["groups", "selfChatMode", "sendReadReceipts", "debounceMs", "textChunkLimit"],
};
const ACCESS_FIELDS = [
  "enabled",
  "allowFrom",
  "groupAllowFrom",
  "groupPolicy",
  "dmPolicy",
  "owners",
  "commandAllowFrom",
];

/** Why some known fields are not brought over. */
const DROPPED: Record<string, string> = {
  authDir:
    "linked-device credentials are not imported; link this number again with `switchboard channels login whatsapp`",
  accounts: "",
};

/** The pairing approvals Clawdbot keeps beside its config, per channel (`credentials/<channel>-allowFrom.json`). */
export type PairedIds = Partial<Record<string, string[]>>;

function mapDiscordDm(dm: unknown, out: Record<string, unknown>, where: string, report: ImportReport): void {
  if (!isRecord(dm)) return;
  if (dm.enabled === false) out.dmPolicy = "disabled";
  else if (typeof dm.policy === "string") out.dmPolicy = dm.policy;
  if (dm.allowFrom !== undefined) out.allowFrom = dm.allowFrom;
  if (dm.groupEnabled !== undefined) out.groupDms = dm.groupEnabled;
  for (const key of Object.keys(dm))
    if (!["enabled", "policy", "allowFrom", "groupEnabled"].includes(key))
      report.unmapped.push({ where: `${where}.dm.${key}`, reason: "no Switchboard equivalent" });
}

/** Fields whose contents map onto several of ours, per channel. */
const NESTED_FIELDS: Record<Channel, Record<string, typeof mapDiscordDm>> = {
  telegram: {},
  discord: { dm: mapDiscordDm },
  whatsapp: {},
};

/** One account's fields: same-named ones copied, Clawdbot's defaults made explicit where ours differ. */
function mapAccount(
  channel: Channel,
  source: Record<string, unknown>,
  where: string,
  report: ImportReport,
  top = true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "accounts") continue;
    if (ACCESS_FIELDS.includes(key) || SAME_FIELDS[channel].includes(key)) out[key] = value;
    else if (Object.hasOwn(NESTED_FIELDS[channel], key)) NESTED_FIELDS[channel][key]!(value, out, where, report);
    else report.unmapped.push({ where: `${where}.${key}`, reason: DROPPED[key] || "no Switchboard equivalent" });
  }
  // Accounts inherit the top level, where Clawdbot's defaults are written once. "pairing" is kept
  // as it is: Switchboard pairs too; the people approved so far join allowFrom (withPaired).
  if (top && out.dmPolicy === undefined && out.enabled !== false) {
    out.dmPolicy = "pairing";
    report.notes.push({
      where: `${where}.dmPolicy`,
      reason: `unset (Clawdbot's default is "pairing", Switchboard's "allowlist"): written as "pairing"`,
    });
  }
  if (top && source.groupPolicy === undefined) {
    // Clawdbot's default is open groups; keeping it keeps the bot answering where it did.
    out.groupPolicy = "open";
    report.notes.push({
      where: `${where}.groupPolicy`,
      reason: 'unset (Clawdbot\'s default is "open"): written as "open"; change it to "allowlist" to close groups',
    });
  }
  return out;
}

function withPaired(account: Record<string, unknown>, paired: string[] | undefined): Record<string, unknown> {
  if (!paired?.length) return account;
  const listed = Array.isArray(account.allowFrom) ? account.allowFrom.map(String) : [];
  return { ...account, allowFrom: [...new Set([...listed, ...paired])] };
}

/**
 * Clawdbot's `channels` (and the legacy top-level `telegram` / `discord` / `whatsapp`) as
 * Switchboard's: allow lists and policies, tokens, groups; pairing approvals join `allowFrom`.
 */
export function mapChannels(
  raw: Record<string, unknown>,
  paired: PairedIds,
  report: ImportReport,
): Record<string, unknown> {
  const sources: Record<string, unknown> = { ...(isRecord(raw.channels) ? raw.channels : {}) };
  for (const channel of CHANNELS) {
    if (!isRecord(raw[channel])) continue;
    report.notes.push({ where: channel, reason: `legacy top-level key, read as channels.${channel}` });
    sources[channel] = { ...raw[channel], ...(isRecord(sources[channel]) ? sources[channel] : {}) };
  }
  const channels: Record<string, unknown> = {};
  for (const [name, section] of Object.entries(sources)) {
    if (!(CHANNELS as readonly string[]).includes(name) || !isRecord(section)) {
      report.unmapped.push({ where: `channels.${name}`, reason: `Switchboard has no ${name} adapter` });
      continue;
    }
    const channel = name as Channel;
    const mapped = withPaired(mapAccount(channel, section, `channels.${name}`, report), paired[name]);
    if (paired[name]?.length)
      report.notes.push({
        where: `channels.${name}.allowFrom`,
        reason: `${paired[name]!.length} people approved by pairing added`,
      });
    if (isRecord(section.accounts)) {
      const accounts: Record<string, unknown> = {};
      for (const [id, account] of Object.entries(section.accounts))
        if (isRecord(account))
          accounts[id] = mapAccount(channel, account, `channels.${name}.accounts.${id}`, report, false);
      mapped.accounts = accounts;
    }
    channels[name] = mapped;
  }
  return channels;
}
