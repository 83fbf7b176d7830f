import { isHostedLidUser, isJidGroup, isLidUser, isPnUser, jidDecode, jidNormalizedUser } from "baileys";

/** Who the linked device is: its phone JID and, when WhatsApp told us, its LID (both without device suffix). */
export interface SelfIdentity {
  /** `<digits>@s.whatsapp.net` */
  pn?: string;
  /** `<digits>@lid` */
  lid?: string;
}

/** A user JID without its device part: `15550001111:7@s.whatsapp.net` -> `15550001111@s.whatsapp.net`. */
export function bareJid(jid: string): string {
  return jidNormalizedUser(jid);
}

/** `+<digits>` for a phone JID (with or without device part), else undefined. */
export function e164Of(jid: string | null | undefined): string | undefined {
  if (!jid || !isPnUser(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  return user && /^\d+$/.test(user) ? `+${user}` : undefined;
}

/** A privacy id with no phone number in it (`@lid`, `@hosted.lid`). */
export function isLid(jid: string | null | undefined): boolean {
  return Boolean(jid && (isLidUser(jid) || isHostedLidUser(jid)));
}

/** A group chat (`@g.us`). */
export function isGroup(jid: string | null | undefined): boolean {
  return Boolean(jid && isJidGroup(jid));
}

/** True when `jid` is the linked device's own number or LID, whatever its device part. */
export function isSelf(jid: string | null | undefined, self: SelfIdentity): boolean {
  if (!jid) return false;
  const bare = bareJid(jid);
  return bare === self.pn || bare === self.lid;
}

/** The linked device's identity from baileys' `creds.me` (or `sock.user`). */
export function selfFrom(me: { id?: string; lid?: string } | undefined): SelfIdentity {
  return {
    ...(me?.id && { pn: bareJid(me.id) }),
    ...(me?.lid && { lid: bareJid(me.lid) }),
  };
}
