import { randomBytes } from "node:crypto";
import type { Logger } from "../logger.js";
import { ERROR_CATALOGUE, type GatewayErrorCode } from "./error-catalogue.js";
import { SwitchboardError } from "./switchboard-error.js";

// ---- The three edges. Nothing else turns an error into text a person reads. ----

/** A short id that ties what a person was shown to the log line with the whole error. */
function newErrorId(): string {
  return randomBytes(4).toString("hex");
}

/** A known error (its message is written for people), or undefined for anything unexpected. */
function known(err: unknown): SwitchboardError | undefined {
  return err instanceof SwitchboardError && ERROR_CATALOGUE[err.code].chat === "say" ? err : undefined;
}

/** What a person is told instead of an unexpected error's own message. */
export function apology(errorId: string): string {
  return `Sorry, something went wrong on my side (error id ${errorId}).`;
}

/**
 * The log edge: one line with the error object itself (pino's `err` serializer keeps its type,
 * stack and cause), its code, and the error id when people were shown one. Known errors log at
 * their catalogue level; anything else is an error.
 */
export function logError(
  logger: Logger,
  err: unknown,
  message: string,
  fields: Record<string, unknown> = {},
  errorId?: string,
): void {
  const code = err instanceof SwitchboardError ? err.code : "INTERNAL";
  const level = known(err) ? ERROR_CATALOGUE[code].log : "error";
  logger[level]({ ...fields, err, code, ...(errorId && { errorId }) }, message);
}

/**
 * The log edge for a failure a person sees only as a status line (an MCP server that cannot
 * start): a known error's own message; anything else logged whole with a new error id, and a short
 * `what (error id X)` line that points to the log instead of the raw message.
 */
export function statusErrorText(
  err: unknown,
  logger: Logger,
  what: string,
  fields: Record<string, unknown> = {},
): string {
  const shown = known(err);
  if (shown) {
    logError(logger, err, what, fields);
    return shown.message;
  }
  const errorId = newErrorId();
  logError(logger, err, what, fields, errorId);
  return `${what} (error id ${errorId}; the gateway log has the details)`;
}

/**
 * The chat edge: the text a chat shows for `err`. A known error says its own message; anything
 * else (a bug) gets {@link apology} with a new error id, and the log line carries that id and the
 * whole error. Either way the error is logged here once.
 */
export function chatErrorText(
  err: unknown,
  logger: Logger,
  message: string,
  fields: Record<string, unknown> = {},
): string {
  const shown = known(err);
  if (shown) {
    logError(logger, err, message, fields);
    return shown.message;
  }
  const errorId = newErrorId();
  logError(logger, err, message, fields, errorId);
  return apology(errorId);
}

/**
 * The result edge (gateway methods, HTTP JSON errors, tool results): a structured `{code, message}`
 * plus the HTTP status. A known error keeps its code (as the protocol names it) and message;
 * anything else is INTERNAL with an error id, logged with the whole error.
 */
export function resultError(
  err: unknown,
  logger: Logger,
  message: string,
  fields: Record<string, unknown> = {},
): { code: GatewayErrorCode; message: string; status: number; errorId?: string } {
  const shown = known(err);
  if (shown) {
    const entry = ERROR_CATALOGUE[shown.code];
    // Requests that fail as asked are answers, not incidents: only log what an operator must see.
    if (entry.log !== "info") logError(logger, err, message, fields);
    return { code: entry.method, message: shown.message, status: entry.status };
  }
  const errorId = newErrorId();
  logError(logger, err, message, fields, errorId);
  return {
    code: "INTERNAL",
    message: `internal error (error id ${errorId}); the gateway log has the details`,
    status: 500,
    errorId,
  };
}

/** The HTTP status for a protocol code, from the catalogue. */
export function httpStatusOf(code: GatewayErrorCode): number {
  return ERROR_CATALOGUE[code].status;
}
