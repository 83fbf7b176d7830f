import { type WAMessage, normalizeMessageContent, type proto } from "baileys";

type Content = proto.IMessage;

/** The message inside ephemeral, view-once and edit wrappers, or undefined when there is none. */
export function unwrap(message: WAMessage["message"]): Content | undefined {
  return normalizeMessageContent(message ?? undefined) ?? undefined;
}

/** What a person typed: `conversation`, extended text, or the caption of an image, video or document. */
export function textOf(content: Content | undefined): string | undefined {
  if (!content) return undefined;
  const text =
    content.conversation ??
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    content.documentWithCaptionMessage?.message?.documentMessage?.caption;
  return typeof text === "string" && text.trim() !== "" ? text : undefined;
}

/** The context info (mentions, quoted message) of whichever content type carries it. */
export function contextInfoOf(content: Content | undefined): proto.IContextInfo | undefined {
  if (!content) return undefined;
  for (const value of Object.values(content)) {
    if (value && typeof value === "object" && "contextInfo" in value && value.contextInfo)
      return value.contextInfo as proto.IContextInfo;
  }
  return undefined;
}
