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
  NOT_OWNER: {
    message: "Another gateway owns this session.",
    fix: "The session's partition moved between gateways while the write was on its way (cluster.owners many): retry in a moment; the global holder sends it to the gateway holding it then.",
    chat: "say",
    method: "UNAVAILABLE",
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
  DATABASE_UNAVAILABLE: {
    message: "The PostgreSQL database cannot be used.",
    fix: "Check state.postgres.url (or SWITCHBOARD_DATABASE_URL): host, port, user, password and database; `switchboard doctor` connects and says what fails.",
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
