import { ErrorCodes, SwitchboardError } from "../../errors.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Longest session id accepted (it becomes part of a file name). */
const MAX_SESSION_ID_LENGTH = 128;

const VALID_SHAPE =
  "A session id is a UUID such as 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b, or 1-128 letters, digits, '.', '_' or '-' starting with a letter or digit.";

/** True when `id` can name a transcript file: a UUID, or a short id with no path characters. */
export function isValidSessionId(id: unknown): id is string {
  return typeof id === "string" && (UUID.test(id) || SAFE_ID.test(id));
}

function problemWith(id: string): string {
  if (id.length === 0) return "is empty";
  if (id.length > MAX_SESSION_ID_LENGTH)
    return `is ${id.length} characters long; the limit is ${MAX_SESSION_ID_LENGTH}`;
  if (id.includes("\0")) return "contains a NUL character";
  if (/[/\\]/.test(id)) return "contains a path separator";
  if (id === "." || id === "..") return "is a relative path";
  if (!/^[A-Za-z0-9]/.test(id)) return "does not start with a letter or digit";
  const bad = [...id].find((ch) => !/[A-Za-z0-9._-]/.test(ch));
  return `contains ${JSON.stringify(bad)}`;
}

function quote(id: string): string {
  return JSON.stringify(id.length > 48 ? `${id.slice(0, 45)}...` : id);
}

/** Returns `id` when {@link isValidSessionId}; otherwise throws INVALID_ARGUMENT saying what is wrong. */
export function assertValidSessionId(id: unknown): string {
  if (isValidSessionId(id)) return id;
  const what = typeof id === "string" ? `${quote(id)} ${problemWith(id)}` : `is a ${typeof id}, not a string`;
  throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `Invalid session id: ${what}. ${VALID_SHAPE}`);
}
