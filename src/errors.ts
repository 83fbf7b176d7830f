import { randomBytes } from "node:crypto";
import type { Logger } from "./logger.js";

/**
 * What each edge does with a code: `chat` says the error's message to the chat ("say") or answers
 * with an apology and an error id ("apologize"); `method` is the code a gateway client sees;
 * `status` the HTTP status of a JSON error; `log` the level of its log line.
 */
interface CatalogueEntry {
  /** the default message, written for the person who reads it */
  message: string;
  /** what to do about it */
  fix: string;
  chat: "say" | "apologize";
  method: GatewayErrorCode;
  status: number;
  log: "info" | "warn" | "error";
}

/**
 * The one catalogue of error codes: every code, its default message and what to do, and how each
 * of the three edges (chat reply, tool or method result, log line) shows it. See docs/architecture.md.
 */
export const ERROR_CATALOGUE = {
  CONFIG_INVALID: {
    message: "The configuration is invalid.",
    fix: "Fix each path listed (`switchboard config validate` checks the file again).",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 400,
    log: "error",
  },
  CONFIG_UNREADABLE: {
    message: "The configuration file cannot be read.",
    fix: "Check that the file exists and is readable, or set SWITCHBOARD_HOME to the right folder.",
    chat: "say",
    method: "UNAVAILABLE",
    status: 503,
    log: "error",
  },
  INVALID_SESSION_KEY: {
    message: "That is not a session key.",
    fix: "Use a key `switchboard sessions` lists, e.g. agent:main:main.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 400,
    log: "info",
  },
  INVALID_ARGUMENT: {
    message: "An argument is not valid.",
    fix: "Correct the argument the message names.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 400,
    log: "info",
  },
  MODEL_FAILED: {
    message: "The model could not answer.",
    fix: "Check the model's provider, key and limits; `/model` picks another model.",
    chat: "say",
    method: "UNAVAILABLE",
    status: 503,
    log: "warn",
  },
  DELIVERY_FAILED: {
    message: "The platform did not take the message.",
    fix: "The reason says whether a retry can help; `/status` lists failed deliveries.",
    chat: "say",
    method: "UNAVAILABLE",
    status: 503,
    log: "warn",
  },
  INVALID_REQUEST: {
    message: "The request is not valid.",
    fix: "Correct the request as the message says.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 400,
    log: "info",
  },
  UNAUTHORIZED: {
    message: "Not allowed.",
    fix: "Send the gateway's bearer token from an allowed host and origin (docs/security.md).",
    chat: "say",
    method: "UNAUTHORIZED",
    status: 401,
    log: "info",
  },
  NOT_FOUND: {
    message: "Not found.",
    fix: "Check the name or id; the matching list method shows what exists.",
    chat: "say",
    method: "NOT_FOUND",
    status: 404,
    log: "info",
  },
  METHOD_NOT_FOUND: {
    message: "Unknown method.",
    fix: "Use one of the methods the message lists.",
    chat: "say",
    method: "METHOD_NOT_FOUND",
    status: 404,
    log: "info",
  },
  UNAVAILABLE: {
    message: "Not available right now.",
    fix: "Try again once the gateway has finished starting, or check its log.",
    chat: "say",
    method: "UNAVAILABLE",
    status: 503,
    log: "warn",
  },
  FORBIDDEN: {
    message: "Not allowed for this caller.",
    fix: "Use a caller the configuration allows (e.g. an agent in hooks.allowedAgentIds), or allow it there.",
    chat: "say",
    method: "UNAUTHORIZED",
    status: 403,
    log: "info",
  },
  METHOD_NOT_ALLOWED: {
    message: "This path does not answer that HTTP method.",
    fix: "Use the method the message names (the Allow header says which).",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 405,
    log: "info",
  },
  TOO_LARGE: {
    message: "The request body is too large.",
    fix: "Send a smaller body, or raise the limit the message names.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 413,
    log: "info",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    message: "The request body must be JSON.",
    fix: "Send content-type: application/json.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 415,
    log: "info",
  },
  RATE_LIMITED: {
    message: "Too many failed attempts.",
    fix: "Wait as long as the Retry-After header says, then send the right token.",
    chat: "say",
    method: "UNAVAILABLE",
    status: 429,
    log: "warn",
  },
  BUSY: {
    message: "It is busy with an earlier request.",
    fix: "Wait for the running one to finish, then try again.",
    chat: "say",
    method: "INVALID_REQUEST",
    status: 409,
    log: "info",
  },
  STATE_CORRUPT: {
    message: "A state file is not valid JSON.",
    fix: "The gateway moves a corrupt file aside and starts it empty; the log names the copy to inspect.",
    chat: "apologize",
    method: "INTERNAL",
    status: 500,
    log: "error",
  },
  STORAGE_FAILED: {
    message: "The message could not be stored.",
    fix: "Check the disk (space, permissions) of $SWITCHBOARD_HOME/state; the platform sends the message again.",
    chat: "apologize",
    method: "UNAVAILABLE",
    status: 503,
    log: "error",
  },
  INTERNAL: {
    message: "Something went wrong on our side.",
    fix: "Look for the error id in the gateway log; it has the whole error.",
    chat: "apologize",
    method: "INTERNAL",
    status: 500,
    log: "error",
  },
} as const satisfies Record<string, CatalogueEntry>;

/** One of the stable codes of {@link ERROR_CATALOGUE}. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The codes a gateway client can receive (the protocol's `error.code`). */
export type GatewayErrorCode =
  | "INVALID_REQUEST"
  | "UNAUTHORIZED"
  | "NOT_FOUND"
  | "METHOD_NOT_FOUND"
  | "UNAVAILABLE"
  | "INTERNAL";

/** Every code by name, for `ErrorCodes.CONFIG_INVALID` style use. */
export const ErrorCodes = Object.fromEntries(Object.keys(ERROR_CATALOGUE).map((code) => [code, code])) as {
  readonly [C in ErrorCode]: C;
};

/** An error that says what failed and how to fix it, with a stable `code` for machines and an optional `cause`. */
export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  /** one line per problem, e.g. `path: what is wrong` for an invalid configuration */
  readonly details: readonly string[];

  constructor(code: ErrorCode, message?: string, options: { details?: readonly string[]; cause?: unknown } = {}) {
    super(message ?? ERROR_CATALOGUE[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SwitchboardError";
    this.code = code;
    this.details = options.details ?? [];
  }

  /** What to do about it, from the catalogue. */
  get fix(): string {
    return ERROR_CATALOGUE[this.code].fix;
  }
}

/** The configuration is wrong or unreadable: the person who wrote it fixes it. */
export class ConfigError extends SwitchboardError {
  constructor(
    code: "CONFIG_INVALID" | "CONFIG_UNREADABLE",
    message: string,
    options: { details?: readonly string[]; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.name = "ConfigError";
  }
}

/** A platform (Telegram, Discord, WhatsApp...) refused or failed a send; `retryable` says whether trying again can help. */
export class DeliveryError extends SwitchboardError {
  readonly retryable: boolean;
  /** the platform asked to wait this long (e.g. Telegram 429 retry_after) */
  readonly retryAfterMs: number | undefined;
  /** a short stable reason, e.g. "chat_not_found", "blocked", "rate_limited", "network" */
  readonly reason: string;

  constructor(
    message: string,
    options: { retryable: boolean; reason: string; retryAfterMs?: number; cause?: unknown },
  ) {
    super("DELIVERY_FAILED", message, { cause: options.cause });
    this.name = "DeliveryError";
    this.retryable = options.retryable;
    this.reason = options.reason;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A gateway client's request cannot be served as asked; the client sees `{code, message}`. */
export class GatewayError extends SwitchboardError {
  declare readonly code: GatewayErrorCode;

  constructor(code: GatewayErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.name = "GatewayError";
  }
}

/** A tool (or a caller acting for one) passed an argument that cannot work; the message says which and why. */
export class ToolArgumentError extends SwitchboardError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("INVALID_ARGUMENT", message, options);
    this.name = "ToolArgumentError";
  }
}

/** A bug: something this code promised itself did not hold. People get an apology; the log gets the rest. */
export class InternalError extends SwitchboardError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("INTERNAL", message, options);
    this.name = "InternalError";
  }
}

/** True when `err` is a {@link SwitchboardError}, optionally with the given code. */
export function isSwitchboardError(err: unknown, code?: ErrorCode): err is SwitchboardError {
  return err instanceof SwitchboardError && (code === undefined || err.code === code);
}

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
