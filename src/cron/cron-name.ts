// The one rule for a cron job's name, shared by the CLI (before it calls the gateway) and the
// gateway's `cron.add` / `cron.update` (CronJobSpecSchema). No imports: the CLI loads it at every start.

/** What a job's name must be, said where one is refused. */
export const CRON_NAME_RULE =
  "must be one line of text, without newlines, other control characters, line or paragraph separators or bidi overrides";

/**
 * Whether `text` may name a job: one line of `cron list`, no newline or other control character, no
 * line or paragraph separator (U+2028, U+2029) and no bidi override or isolate (U+202A-U+202E,
 * U+2066-U+2069), which would break the line or reorder the text shown around the name.
 */
export const isOneLineName = (text: string): boolean => !/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u.test(text);

/**
 * A name as `cron list` shows it: as it is when {@link isOneLineName}, else quoted (JSON) with its
 * separators and bidi controls escaped too (JSON leaves them raw), so a job stored before the check stays on its line.
 */
export const shownName = (text: string): string =>
  isOneLineName(text)
    ? text
    : JSON.stringify(text).replace(
        /[\u2028\u2029\u202A-\u202E\u2066-\u2069]/gu,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
