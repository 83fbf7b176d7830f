import type http from "node:http";
import { ERROR_CATALOGUE, type ErrorCode, SwitchboardError } from "../errors.js";

/**
 * A refusal: a catalogue code (sent as the body's `error.code`; its HTTP status comes from the
 * catalogue), the message and the field it is about.
 */
export class HookError extends SwitchboardError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(code, message);
    this.name = "HookError";
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

/** Answers with a JSON body. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

/** zod issues to one HookError naming the first field. */
export function invalidBody(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): HookError {
  const first = issues[0]!;
  const field = first.path.map(String).join(".") || "body";
  const message = issues.map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`).join("; ");
  return new HookError("INVALID_REQUEST", message, field);
}

/** Runs `work`; its error becomes an INVALID_REQUEST about `field`. */
export function checkedField<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (err) {
    throw new HookError("INVALID_REQUEST", `${field}: ${(err as Error).message}`, field);
  }
}
