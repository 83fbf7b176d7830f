// The one rule for a cron job's name, shared by the CLI (before it calls the gateway) and the
// gateway's `cron.add` / `cron.update` (CronJobSpecSchema). No imports: the CLI loads it at every start.

/** What a job's name must be, said where one is refused. */
export const CRON_NAME_RULE = "must be one line of text, without newlines or other control characters";

/** Whether `text` may name a job: one line of `cron list`, no newline or other control character. */
export const isOneLineName = (text: string): boolean => !/\p{Cc}/u.test(text);
