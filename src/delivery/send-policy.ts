import type { SessionConfig } from "../config/schema/session.js";
import type { ChatType, ParsedSessionKey } from "../routing/session-key.js";
import { sessionKeyForms as keyForms } from "../routing/session-key-refs.js";
import type { SessionEntry } from "../sessions/session-entry.js";

/** What {@link resolveSendPolicy} reads. */
export interface SendPolicyInput {
  /** `session.sendPolicy` as validated by the config schema; undefined allows everything */
  policy: SessionConfig["sendPolicy"] | undefined;
  entry?: SessionEntry | undefined;
  key: ParsedSessionKey;
  /** the channel the message is going to, used when the key names none */
  channel?: string | undefined;
  /** used when the key carries no chat type */
  chatType?: ChatType | undefined;
}

/** The verdict and what decided it (for the audit log line). */
export interface SendPolicyDecision {
  decision: "allow" | "deny";
  source: "override" | "rule" | "default";
  /** index into `rules` of the deciding rule (the first matching allow, or the matching deny) */
  ruleIndex?: number;
}

function lower(value: string | undefined): string | undefined {
  const text = value?.trim().toLowerCase();
  return text ? text : undefined;
}

/**
 * Whether a session may deliver to a channel (docs/commands.md; the policy gates delivery, never processing): the entry
 * override wins, then the rules in order (a matching deny wins, any matching allow allows), then
 * the default. Facts come from the parsed key first, then the arguments, then the entry.
 */
export function resolveSendPolicy(input: SendPolicyInput): SendPolicyDecision {
  const { policy, entry, key } = input;
  const override = lower(entry?.sendPolicy);
  if (override === "allow" || override === "deny") return { decision: override, source: "override" };
  if (!policy) return { decision: "allow", source: "default" };

  const channel = lower(key.channel) ?? lower(input.channel) ?? lower(entry?.channel) ?? lower(entry?.lastChannel);
  const chatType = key.chatType ?? input.chatType ?? entry?.chatType;
  const forms = keyForms(key);
  let allowedBy: number | undefined;
  for (const [index, rule] of policy.rules.entries()) {
    const match = rule.match;
    if (match.channel !== undefined && lower(match.channel) !== channel) continue;
    if (match.chatType !== undefined && lower(match.chatType) !== chatType) continue;
    const prefix = lower(match.keyPrefix);
    if (prefix !== undefined && !forms.some((form) => form.startsWith(prefix))) continue;
    if (rule.action === "deny") return { decision: "deny", source: "rule", ruleIndex: index };
    allowedBy ??= index;
  }
  if (allowedBy !== undefined) return { decision: "allow", source: "rule", ruleIndex: allowedBy };
  return { decision: policy.default === "deny" ? "deny" : "allow", source: "default" };
}
