// The NOTIFY form of a batch of hub events (src/cluster/event-bridge.ts). PostgreSQL refuses a
// payload of 8000 bytes or more, so a batch's JSON is cut into parts of at most `maxBytes` (cut on
// UTF-8 character boundaries), all sent in one transaction, each part with a header:
//   e1 <origin node, URI-encoded> <batch id> <index> <count>\n<piece of the JSON>
// The receiver puts a batch together from its parts (by index) and re-emits it whole.

/** PostgreSQL's limit is "shorter than 8000 bytes"; a little room is kept. */
export const MAX_NOTIFY_BYTES = 7_900;

/** One part of a batch, as read from a notification. */
export interface EventPart {
  origin: string;
  batch: string;
  index: number;
  count: number;
  piece: string;
}

/** One event as the hub emitted it. */
export type WireEvent = [event: string, payload: unknown];

const VERSION = "e1";

/** A header at its longest for `count` parts (the index has as many digits as the count). */
const headerOf = (origin: string, batch: string, index: number | string, count: number) =>
  `${VERSION} ${encodeURIComponent(origin)} ${batch} ${index} ${count}\n`;

/** Cuts `body` into pieces of at most `max` UTF-8 bytes, never inside a character. */
function cutUtf8(body: string, max: number): string[] {
  const bytes = Buffer.from(body, "utf8");
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + max, bytes.length);
    // A continuation byte (10xxxxxx) starts no character: cut before the character it belongs to.
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(bytes.subarray(start, end).toString("utf8"));
    start = end;
  }
  return pieces.length > 0 ? pieces : [""];
}

/** The notification payloads of one batch: every one at most `maxBytes` bytes. */
export function encodeBatch(origin: string, batch: string, body: string, maxBytes = MAX_NOTIFY_BYTES): string[] {
  // The header's length depends on the count of parts: grow the guess until the pieces fit.
  for (let guess = 1; ; guess *= 10) {
    const room = maxBytes - Buffer.byteLength(headerOf(origin, batch, "9".repeat(String(guess).length), guess * 10));
    if (room < 16) throw new Error(`a NOTIFY payload of ${maxBytes} bytes leaves no room for events`);
    const pieces = cutUtf8(body, room);
    if (pieces.length < guess * 10) return pieces.map((piece, i) => headerOf(origin, batch, i, pieces.length) + piece);
  }
}

/** A notification read back, or undefined when it is not one of the bridge's. */
export function readPart(payload: string): EventPart | undefined {
  const newline = payload.indexOf("\n");
  if (newline < 0) return undefined;
  const [version, origin, batch, index, count] = payload.slice(0, newline).split(" ");
  if (version !== VERSION || origin === undefined || batch === undefined) return undefined;
  const at = Number(index);
  const of = Number(count);
  if (!Number.isInteger(at) || !Number.isInteger(of) || at < 0 || at >= of) return undefined;
  return { origin: decodeURIComponent(origin), batch, index: at, count: of, piece: payload.slice(newline + 1) };
}

/**
 * Batches put together from their parts: `add` returns the batch's events once its last part came.
 * Parts of a batch are never lost one by one (one transaction), except across a reconnection: `clear`
 * then drops the unfinished ones. At most `keep` unfinished batches are kept (the oldest dropped).
 */
export function createReassembly(keep = 64) {
  const open = new Map<string, { pieces: string[]; got: number }>();
  return {
    add(part: EventPart): WireEvent[] | undefined {
      const key = `${part.origin} ${part.batch}`;
      let batch = open.get(key);
      if (!batch) {
        batch = { pieces: new Array<string>(part.count), got: 0 };
        open.set(key, batch);
        if (open.size > keep) open.delete(open.keys().next().value!);
      }
      if (batch.pieces[part.index] === undefined) batch.got++;
      batch.pieces[part.index] = part.piece;
      if (batch.got < part.count) return undefined;
      open.delete(key);
      return JSON.parse(batch.pieces.join("")) as WireEvent[];
    },
    clear: () => open.clear(),
  };
}
