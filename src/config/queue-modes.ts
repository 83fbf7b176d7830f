/** How messages that arrive while a session's turn runs are answered (docs/config.md, `session.queue`); free of zod, so the stores read it without the config schema. */
export const QUEUE_MODES = ["followup", "collect", "steer", "interrupt"] as const;
