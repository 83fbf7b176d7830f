import type http from "node:http";

/** Why a body could not be read as JSON: a catalogue code (its HTTP status is 400, 413 or 415) and a message. */
export interface BodyProblem {
  code: "INVALID_REQUEST" | "TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE";
  message: string;
}

/**
 * 415 unless the body is declared `application/json` (parameters such as `; charset=utf-8` allowed):
 * a browser may send `text/plain` cross-site without asking first, JSON only after a preflight.
 */
export function contentTypeProblem(req: http.IncomingMessage): BodyProblem | undefined {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json") return undefined;
  return { code: "UNSUPPORTED_MEDIA_TYPE", message: `content-type must be application/json (got "${type || "none"}")` };
}

/**
 * The body, or undefined once it passes `maxBytes`. Past the limit the rest is read and dropped, not
 * the request destroyed: a client still sending (a chunked body, a relay streaming it) then reads
 * the 413 instead of a reset connection or an answer that never comes.
 */
function bodyWithin(req: http.IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      req.off("data", onData);
      req.off("end", onEnd);
      req.resume(); // flowing with no reader: the rest is dropped as it arrives
      resolve(undefined);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", reject);
  });
}

/**
 * Reads a JSON request body (the webhooks' and the gateway's `/tools/invoke`): `content-type: application/json` (415 otherwise), at most
 * `maxBytes` (413, checked on the declared length first and while reading), and valid JSON (400).
 */
export async function readJsonBody(
  req: http.IncomingMessage,
  maxBytes: number,
  limitName = `${maxBytes} bytes`,
): Promise<{ value: unknown } | BodyProblem> {
  const wrongType = contentTypeProblem(req);
  if (wrongType) return wrongType;
  const declared = Number(req.headers["content-length"]);
  const tooLarge: BodyProblem = { code: "TOO_LARGE", message: `body larger than ${limitName}` };
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge;
  const body = await bodyWithin(req, maxBytes);
  if (body === undefined) return tooLarge;
  try {
    return { value: JSON.parse(body.toString("utf8")) };
  } catch (err) {
    return { code: "INVALID_REQUEST", message: `body must be JSON: ${(err as Error).message}` };
  }
}
