import type { Config } from "../config/schema/index.js";
import { CLIENT_CHANNEL } from "../delivery/channel-adapter.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import { type AccountAccess, resolveAccountAccess } from "./channel-account.js";

/** What a sender may do here (three tiers: talk, run commands, run owner-only commands). */
export interface AccessDecision {
  /** the message may reach the agent */
  allowed: boolean;
  /** the sender may run commands */
  commands: boolean;
  /** the sender may run owner-only commands */
  owner: boolean;
  /** a group message that does not mention the bot (only commands pass) */
  needsMention: boolean;
  reason?: string;
}

/** Channels whose senders are gateway clients (the terminal and web chat): they act as the owner. */
export const OWNER_CHANNELS: ReadonlySet<string> = new Set([CLIENT_CHANNEL]);

function normalizeEntry(entry: string, channel: string): string {
  const trimmed = entry.trim().toLowerCase();
  const prefixes = channel === "telegram" ? ["telegram:", "tg:"] : [`${channel}:`];
  const bare = prefixes.reduce((value, prefix) => (value.startsWith(prefix) ? value.slice(prefix.length) : value), trimmed);
  return bare;
}

/** True when the sender's id or @username is on the list; "*" must be written to mean everyone. */
export function listIncludes(list: readonly string[], message: InboundMessage): boolean {
  const id = message.sender.id.trim().toLowerCase();
  const username = message.sender.username ? `@${message.sender.username.replace(/^@/, "").toLowerCase()}` : undefined;
  return list.some((raw) => {
    const entry = normalizeEntry(raw, message.channel);
    return entry === "*" || entry === id || (username !== undefined && entry === username);
  });
}

/** The rules for a group chat: a Discord guild (then its channel), else the chat (then its forum topic), else "*". */
function groupRule(access: AccountAccess, message: InboundMessage) {
  const { chat } = message;
  const group = (chat.guildId !== undefined ? access.groups[chat.guildId] : undefined) ?? access.groups[chat.id] ?? access.groups["*"];
  const inner = chat.guildId !== undefined ? group?.channels?.[chat.id] : chat.threadId !== undefined ? group?.topics?.[chat.threadId] : undefined;
  return {
    requireMention: inner?.requireMention ?? group?.requireMention ?? true,
    allowFrom: inner?.allowFrom ?? group?.allowFrom,
    /** a Discord channel switched off with `allow: false` */
    closed: inner?.allow === false,
  };
}

/**
 * Decides what the sender of `message` may do. Owners may also run commands and talk; command
 * users may also talk; nothing is inferred upwards. An empty list allows nobody.
 */
export function resolveAccess(config: Pick<Config, "channels">, message: InboundMessage): AccessDecision {
  if (OWNER_CHANNELS.has(message.channel)) return { allowed: true, commands: true, owner: true, needsMention: false };
  const access = resolveAccountAccess(config, message.channel, message.accountId);
  const owner = listIncludes(access.owners, message);
  const commands = owner || listIncludes(access.commandAllowFrom, message);
  if (message.chat.type === "direct") {
    const allowed = commands || (access.dmPolicy === "open" || (access.dmPolicy === "allowlist" && listIncludes(access.allowFrom, message)));
    const disabled = access.dmPolicy === "disabled" && !owner;
    return { allowed: allowed && !disabled, commands: commands && !disabled, owner, needsMention: false, ...(!allowed || disabled ? { reason: "dm-not-allowed" } : {}) };
  }
  const rule = groupRule(access, message);
  const listed = listIncludes(rule.allowFrom ?? access.groupAllowFrom, message);
  const allowed = access.groupPolicy !== "disabled" && !rule.closed && (commands || access.groupPolicy === "open" || listed);
  const needsMention = rule.requireMention && !message.wasMentioned;
  return { allowed, commands: commands && access.groupPolicy !== "disabled", owner, needsMention, ...(!allowed ? { reason: "group-not-allowed" } : {}) };
}
