import { z } from "zod";
import { stripEntryPrefix } from "../config/entry-prefix.js";
import type { Config } from "../config/schema/index.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import { type AccountAccess, resolveAccountAccess } from "./channel-account.js";

/**
 * What a sender may do here (three tiers: talk, run commands, run owner-only commands). A schema:
 * with `cluster.owners: "many"` the decision travels with a forwarded message (src/inbound/inbox-forward.ts).
 */
export const AccessDecisionSchema = z.object({
  /** the sender may talk: their plain messages reach the agent */
  allowed: z.boolean(),
  /** the sender may run commands (which does not let them talk) */
  commands: z.boolean(),
  /** the sender may run owner-only commands (and so may run commands and talk) */
  owner: z.boolean(),
  /** a group message that does not mention the bot (only commands pass) */
  needsMention: z.boolean(),
  /** why the sender may not talk: `dm-not-allowed`, `dm-pairing`, `group-not-allowed`, or `commands-only` for a command user */
  reason: z.string().optional(),
  /** an unknown sender's DM on an account with `dmPolicy: "pairing"`: they may be given a pairing code */
  pairing: z.literal(true).optional(),
  /**
   * The gateway's own clients (terminal, web UI), who passed the gateway's auth: owners of every
   * account, named by no channel's rules, answered as method results rather than by delivery.
   */
  gatewayClient: z.literal(true).optional(),
});
/** What a sender may do here. */
export type AccessDecision = z.infer<typeof AccessDecisionSchema>;

/** Options of {@link resolveAccess}. */
interface AccessOptions {
  /** what each channel's adapter declared: the one place the gateway's own clients get owner rights */
  capabilitiesOf?: CapabilitiesOf | undefined;
  /** true when an owner approved this sender by pairing code (the account's stored allow list); default: nobody */
  paired?: (message: InboundMessage) => boolean;
}

/**
 * True when the message comes from the gateway's own clients (the adapter declared
 * `gatewayClients`): where inbound, set-aside and commands learn it (owner rights, no chat delivery).
 */
export function fromGatewayClient(capabilitiesOf: CapabilitiesOf | undefined, message: InboundMessage): boolean {
  return capabilitiesOf?.(message.channel)?.gatewayClients === true;
}

/** True when the sender's id or @username is on the list; "*" must be written to mean everyone. */
export function listIncludes(list: readonly string[], message: InboundMessage): boolean {
  const id = message.sender.id.trim().toLowerCase();
  const username = message.sender.username ? `@${message.sender.username.replace(/^@/, "").toLowerCase()}` : undefined;
  return list.some((raw) => {
    const entry = stripEntryPrefix(raw, message.channel);
    return entry === "*" || entry === id || (username !== undefined && entry === username);
  });
}

/** The rules for a group chat: a Discord guild (then its channel), else the chat (then its forum topic), else "*". */
function groupRule(access: AccountAccess, message: InboundMessage) {
  const { chat } = message;
  const group =
    (chat.guildId !== undefined ? access.groups[chat.guildId] : undefined) ??
    access.groups[chat.id] ??
    access.groups["*"];
  const inner =
    chat.guildId !== undefined
      ? (group?.channels?.[chat.id] ?? (chat.parentId !== undefined ? group?.channels?.[chat.parentId] : undefined))
      : chat.threadId !== undefined
        ? group?.topics?.[chat.threadId]
        : undefined;
  return {
    requireMention: inner?.requireMention ?? group?.requireMention ?? access.requireMention,
    allowFrom: inner?.allowFrom ?? group?.allowFrom,
    /** a Discord channel switched off with `allow: false` */
    closed: inner?.allow === false,
  };
}

/**
 * Decides what the sender of `message` may do. Owners may run commands and talk; command users may
 * run commands only; talkers may talk only. An empty list allows nobody. Senders an owner approved
 * by pairing code talk in DMs like `allowFrom` entries (never as owners or command users).
 */
export function resolveAccess(
  config: Pick<Config, "channels">,
  message: InboundMessage,
  options: AccessOptions = {},
): AccessDecision {
  if (fromGatewayClient(options.capabilitiesOf, message))
    return { allowed: true, commands: true, owner: true, needsMention: false, gatewayClient: true };
  const access = resolveAccountAccess(config, message.channel, message.accountId);
  const owner = listIncludes(access.owners, message);
  const commandUser = owner || listIncludes(access.commandAllowFrom, message);
  if (message.chat.type === "direct") {
    const open = access.dmPolicy !== "disabled" || owner;
    const listed = access.dmPolicy === "allowlist" || access.dmPolicy === "pairing";
    const talk =
      owner ||
      access.dmPolicy === "open" ||
      (listed && (listIncludes(access.allowFrom, message) || options.paired?.(message) === true));
    const result = decision(open && talk, open && commandUser, owner, false, "dm-not-allowed");
    // Only a stranger may ask for a code: a command user is known, and a talker is already in.
    if (access.dmPolicy === "pairing" && !result.allowed && !result.commands)
      return { ...result, reason: "dm-pairing", pairing: true };
    return result;
  }
  const rule = groupRule(access, message);
  const open = access.groupPolicy !== "disabled" && !rule.closed;
  const talk = owner || access.groupPolicy === "open" || listIncludes(rule.allowFrom ?? access.groupAllowFrom, message);
  return decision(
    open && talk,
    open && commandUser,
    owner,
    rule.requireMention && !message.wasMentioned,
    "group-not-allowed",
  );
}

function decision(
  allowed: boolean,
  commands: boolean,
  owner: boolean,
  needsMention: boolean,
  refused: string,
): AccessDecision {
  if (allowed) return { allowed, commands, owner, needsMention };
  return { allowed, commands, owner, needsMention, reason: commands ? "commands-only" : refused };
}
