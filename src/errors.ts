/** Stable error codes: the one error family turned into replies, tool results and log lines at the edges. */
export const ErrorCodes = {
  CONFIG_INVALID: "CONFIG_INVALID",
  CONFIG_UNREADABLE: "CONFIG_UNREADABLE",
  INVALID_SESSION_KEY: "INVALID_SESSION_KEY",
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
} as const;

/** One of the stable codes in {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** An error that says what failed and how to fix it, with a stable `code` for machines. */
export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  readonly details: readonly string[];

  constructor(code: ErrorCode, message: string, details: readonly string[] = []) {
    super(message);
    this.name = "SwitchboardError";
    this.code = code;
    this.details = details;
  }
}

/** True when `err` is a {@link SwitchboardError}, optionally with the given code. */
export function isSwitchboardError(err: unknown, code?: ErrorCode): err is SwitchboardError {
  return err instanceof SwitchboardError && (code === undefined || err.code === code);
}
