/** The core did not store an update, so Telegram must not be told it arrived (it then resends it). */
export class NotStoredError extends Error {
  constructor(cause: unknown) {
    super(`the update was not stored: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "NotStoredError";
  }
}
