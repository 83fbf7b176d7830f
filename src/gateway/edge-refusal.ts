import http from "node:http";
import type { Duplex } from "node:stream";
import { ERROR_CATALOGUE } from "../errors.js";

/** The codes a caller is refused with before any route runs. */
type EdgeCode = "FORBIDDEN" | "RATE_LIMITED" | "UNAVAILABLE";

const bodyOf = (code: EdgeCode, message: string) => JSON.stringify({ ok: false, error: { code, message } });

/**
 * Refuses an HTTP request at the edge (Origin/Host checks, failed-token lockout, connection caps)
 * with the catalogue code itself in the body, as the hooks answer; the status comes from the catalogue.
 */
export function sendRefusal(
  res: http.ServerResponse,
  code: EdgeCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(ERROR_CATALOGUE[code].status, {
    "content-type": "application/json; charset=utf-8",
    ...headers,
  });
  res.end(bodyOf(code, message));
}

/** The same refusal written on a raw socket: a WebSocket upgrade that is not accepted. */
export function writeRefusal(
  socket: Duplex,
  code: EdgeCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  const status = ERROR_CATALOGUE[code].status;
  const body = bodyOf(code, message);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${lines.join("")}connection: close\r\n\r\n${body}`,
  );
}
