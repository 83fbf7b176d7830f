import { type DeliveryContext, DeliveryError, type TargetCodec } from "../../src/index.js";

/** Where a WhatsApp message goes: a phone number (a DM) or a group JID. */
export type WhatsAppTarget = { kind: "dm"; e164: string; jid: string } | { kind: "group"; jid: string };

const E164 = /^\+?(\d{6,15})$/;
const USER_JID = /^(\d{6,15})(?::\d+)?@s\.whatsapp\.net$/;
const GROUP_JID = /^\d+(?:-\d+)?@g\.us$/;

/**
 * Reads a delivery target's `to`: `+<digits>` (a leaked `whatsapp:` prefix and a phone JID are
 * accepted and read as the number) or `<id>@g.us` (optionally after `group:`).
 */
export function parseWhatsAppTarget(to: string | undefined): WhatsAppTarget {
  const raw = (to ?? "")
    .trim()
    .replace(/^whatsapp:/i, "")
    .replace(/^group:/i, "");
  // A number as people write it: "+1 (555) 123-4567".
  const number = E164.exec(raw.replace(/[\s().-]/g, ""))?.[1] ?? USER_JID.exec(raw)?.[1];
  if (number) return { kind: "dm", e164: `+${number}`, jid: `${number}@s.whatsapp.net` };
  const group = raw.toLowerCase();
  if (GROUP_JID.test(group)) return { kind: "group", jid: group };
  throw new DeliveryError(
    `"${to ?? ""}" is not a WhatsApp target: use a phone number in international form (whatsapp:+15551234567) or a group JID (whatsapp:120363012345678901@g.us).`,
    { retryable: false, reason: "bad_target" },
  );
}

/** The JID a send goes to. */
export function jidOfTarget(target: DeliveryContext): string {
  return parseWhatsAppTarget(target.to).jid;
}

/** WhatsApp's targets: `whatsapp:+<digits>` for a person, `whatsapp:<id>@g.us` for a group. */
export const whatsappTargets: TargetCodec = {
  encode: (target) => {
    const parsed = parseWhatsAppTarget(target.to);
    return parsed.kind === "dm" ? parsed.e164 : parsed.jid;
  },
  decode: (text) => {
    const parsed = parseWhatsAppTarget(text);
    return { channel: "whatsapp", to: parsed.kind === "dm" ? parsed.e164 : parsed.jid };
  },
};
