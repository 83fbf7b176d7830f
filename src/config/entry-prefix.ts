/**
 * The prefixes a person may write before an id in `allowFrom`, `owners` and the like, per channel
 * (`tg:42` and `telegram:42` are Telegram's user 42). A channel not in the table takes `<channel>:`.
 */
const ENTRY_PREFIXES: Readonly<Record<string, readonly string[]>> = {
  telegram: ["telegram:", "tg:"],
  discord: ["discord:"],
  whatsapp: ["whatsapp:"],
};

/** An access-list entry without case or its channel's prefix: `TG:42` on Telegram is `42`. */
export function stripEntryPrefix(entry: string, channel: string): string {
  const trimmed = entry.trim().toLowerCase();
  const prefixes = ENTRY_PREFIXES[channel] ?? [`${channel}:`];
  const prefix = prefixes.find((p) => trimmed.startsWith(p));
  return prefix ? trimmed.slice(prefix.length) : trimmed;
}

/** An access-list entry without case or any channel's prefix (`tg:42`, `discord:42` and `42` are one). */
export function stripAnyEntryPrefix(entry: string): string {
  const trimmed = entry.trim().toLowerCase();
  const prefix = Object.values(ENTRY_PREFIXES)
    .flat()
    .find((p) => trimmed.startsWith(p));
  return prefix ? trimmed.slice(prefix.length) : trimmed;
}
