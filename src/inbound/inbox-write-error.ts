// The one error of an inbox that could not store a message (./inbox-state.ts, ./inbox-forward.ts):
// the adapter must not acknowledge the message to the platform, so it is delivered again.
import { SwitchboardError } from "../errors.js";

/** The inbox could not store a message: the adapter must not acknowledge it to the platform. */
export class InboxWriteError extends SwitchboardError {
  constructor(cause: unknown) {
    super("STORAGE_FAILED", `the inbound message could not be stored: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = "InboxWriteError";
  }
}
