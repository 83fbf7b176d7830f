// The platform ids a key may carry when a person or client names it (`requireSessionKey`): only
// those a channel's platform produces, so `agent:main:telegram:dm:12 34` or `...:group:<script>` is
// refused instead of creating a stray session. The parser itself stays lenient (stored keys, fixtures).
import type { ParsedSessionKey } from "./session-key.js";

/** What no platform id contains on any channel: whitespace, control characters, `<` and `>`. */
const ANY_ID = /^[^\s\p{Cc}<>]+$/u;

/** The ids of one channel's platform, by the part of the key they stand in; a part not listed is never produced. */
interface PlatformIds {
  dm: RegExp;
  group?: RegExp;
  channel?: RegExp;
  topic?: RegExp;
  thread?: RegExp;
}

const DIGITS = /^\d+$/;
/** Discord's ids: snowflakes, up to 20 digits. */
const SNOWFLAKE = /^\d{1,20}$/;

const PLATFORMS: Record<string, PlatformIds> = {
  // Users are positive numbers, groups and supergroups negative; forum topics and DM threads numbered.
  telegram: { dm: DIGITS, group: /^-\d+$/, topic: DIGITS, thread: DIGITS },
  // A DM is keyed by its author, a group DM by its channel, a guild channel or thread by its own id.
  discord: { dm: SNOWFLAKE, group: SNOWFLAKE, channel: SNOWFLAKE, thread: SNOWFLAKE },
  // A DM is keyed by the sender's phone number (E.164) or its JID; a group by its `@g.us` JID.
  whatsapp: {
    dm: /^(?:\+\d{1,20}|\d{5,20}@(?:s\.whatsapp\.net|c\.us)|\d+@(?:hosted\.)?lid)$/,
    group: /^\d+(?:-\d+)?@g\.us$/,
  },
};

/** The platform ids of `key`, each with the part it stands in. */
function idsOf(key: ParsedSessionKey): Array<[keyof PlatformIds, string | undefined]> {
  if (key.kind === "dm")
    return [
      ["dm", key.peerId],
      ["thread", key.threadId],
    ];
  if (key.kind === "group" || key.kind === "channel")
    return [
      [key.kind, key.peerId],
      ["topic", key.topicId],
      ["thread", key.threadId],
    ];
  if (key.kind === "main") return [["thread", key.threadId]];
  return [];
}

/**
 * Whether every platform id in `key` is one its channel can produce. A DM peer named by
 * `session.identityLinks` (`linkNames`, lowercased) stands for a person, not a platform id, and passes.
 */
export function hasPlatformIds(key: ParsedSessionKey, linkNames: ReadonlySet<string> = new Set()): boolean {
  const platform = key.channel === undefined ? undefined : PLATFORMS[key.channel];
  return idsOf(key).every(([part, id]) => {
    if (id === undefined) return true;
    if (part === "dm" && linkNames.has(id)) return true;
    if (!ANY_ID.test(id)) return false;
    if (!platform || (key.kind === "main" && part === "thread")) return true;
    return platform[part]?.test(id) ?? false;
  });
}
