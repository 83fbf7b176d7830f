import { ERROR_CATALOGUE, type ErrorCode, type GatewayErrorCode } from "./error-catalogue.js";

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
