import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../../../src/errors.js";
import { decodeTranscriptCursor, encodeTranscriptCursor } from "../../../src/sessions/transcripts/transcript-cursor.js";

describe("encodeTranscriptCursor", () => {
  it("makes an opaque base64url string that decodes to the offset", () => {
    const cursor = encodeTranscriptCursor(123_456_789);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeTranscriptCursor(cursor)).toBe(123_456_789);
  });
});

describe("decodeTranscriptCursor", () => {
  const bad = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

  it.each([
    "",
    "not a cursor!",
    "%%%",
    bad({ o: -1 }),
    bad({ o: 1.5 }),
    bad({ x: 1 }),
    bad(null),
    bad("o"),
    "x".repeat(100),
  ])("refuses %j with INVALID_ARGUMENT", (cursor) => {
    expect(() => decodeTranscriptCursor(cursor)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }),
    );
  });
});
