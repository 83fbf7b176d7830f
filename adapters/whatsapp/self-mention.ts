import type { SelfIdentity } from "./jids.js";

const LEADING_MENTION = /^@\+?(\d{5,})[\s,:]*/;

const digitsOf = (jid: string | undefined) => jid?.split("@")[0]?.split(":")[0];

/**
 * The text without a leading `@<number>` that is the bot's own number or LID (WhatsApp writes a
 * mention as `@<digits>` in the text); the text unchanged otherwise.
 */
export function stripLeadingSelfMention(text: string, self: SelfIdentity): string {
  const match = LEADING_MENTION.exec(text);
  if (!match) return text;
  const digits = match[1];
  const ours = digits === digitsOf(self.pn) || digits === digitsOf(self.lid);
  return ours ? text.slice(match[0].length) : text;
}
