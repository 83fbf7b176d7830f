import type { Message, MessageEntity, UserFromGetMe } from "grammy/types";

/** Who the bot is, as far as mention detection needs it. */
export type BotInfo = Pick<UserFromGetMe, "id" | "username">;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The patterns that find a bot's `@username` in text. */
interface MentionPatterns {
  /** `@ThisBot` anywhere, not inside a longer name */
  anywhere: RegExp;
  /** a leading `@ThisBot ` before some text */
  leading: RegExp;
  /** the `@ThisBot` of a leading `/cmd@ThisBot` */
  command: RegExp;
}

// Built once per username (a gateway has a bot or a few), not three times for every message.
const patternsByUsername = new Map<string, MentionPatterns>();

function mentionPatterns(username: string): MentionPatterns {
  let patterns = patternsByUsername.get(username);
  if (!patterns) {
    const handle = escapeRegExp(username);
    patterns = {
      anywhere: new RegExp(`(^|[^\\w@])@${handle}(?!\\w)`, "i"),
      leading: new RegExp(`^\\s*@${handle}\\s+(?=\\S)`, "i"),
      command: new RegExp(`^(/[A-Za-z0-9_]+)@${handle}(?=$|[\\s:])`, "i"),
    };
    patternsByUsername.set(username, patterns);
  }
  return patterns;
}

/** The topic-creation message every forum message "replies" to; not a real reply. */
export function isTopicRoot(message: Message): boolean {
  const replied = message.reply_to_message;
  return (
    replied !== undefined &&
    (replied.forum_topic_created !== undefined ||
      (message.is_topic_message === true && replied.message_id === message.message_thread_id))
  );
}

function entityMentions(text: string, entities: readonly MessageEntity[], bot: BotInfo): boolean {
  const handle = `@${bot.username}`.toLowerCase();
  return entities.some((entity) => {
    if (entity.type === "text_mention") return entity.user?.id === bot.id;
    const part = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "mention") return part === handle;
    // `/cmd@ThisBot` names the bot as much as a mention does.
    return entity.type === "bot_command" && part.endsWith(handle);
  });
}

/**
 * True when the message addresses the bot: an `@username` mention (entity or plain text, case
 * does not matter), a text mention of the bot's id, `/cmd@ThisBot`, or a reply to one of the
 * bot's own messages (the topic-creation message of a forum topic does not count).
 */
export function mentionsBot(message: Message, bot: BotInfo): boolean {
  const text = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  if (entityMentions(text, entities, bot) || commandAddressee(text)?.toLowerCase() === bot.username.toLowerCase())
    return true;
  if (bot.username && mentionPatterns(bot.username).anywhere.test(text)) return true;
  return !isTopicRoot(message) && message.reply_to_message?.from?.id === bot.id;
}

/**
 * The bot a leading `/cmd@name` addresses, or undefined when the message does not open with an
 * addressed command. Telegram only marks it as a `bot_command` entity; plain text is read the same way.
 */
export function commandAddressee(text: string): string | undefined {
  return /^\/[A-Za-z0-9_]+@([A-Za-z0-9_]+)(?=$|[\s:])/.exec(text)?.[1];
}

/**
 * The text as the core reads it: a leading mention of this bot (`@ThisBot what is up?`) and the
 * `@ThisBot` after a leading command (`/status@ThisBot`) removed, so `@ThisBot /new hi` and
 * `/new@ThisBot hi` both read `/new hi`. A mention of anyone else stays; so does a message that
 * is only the mention (nothing would be left to read).
 */
export function withoutOwnMention(text: string, bot: BotInfo): string {
  if (!bot.username) return text;
  const { leading, command } = mentionPatterns(bot.username);
  return text.replace(leading, "").replace(command, "$1");
}
