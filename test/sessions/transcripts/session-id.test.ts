import { describe, expect, it } from "vitest";
import { ErrorCodes, isSwitchboardError } from "../../../src/errors.js";
import { assertValidSessionId, isValidSessionId } from "../../../src/sessions/transcripts/index.js";

describe("isValidSessionId", () => {
  it.each([
    "1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
    "1B4E28BA-2FA1-4D3B-A3F5-EF19B5A7633B",
    "sess-main",
    "s_1.2",
    "a",
    "a".repeat(128),
  ])("accepts %j", (id) => {
    expect(isValidSessionId(id)).toBe(true);
  });

  it.each([
    "",
    ".",
    "..",
    "../x",
    "a/b",
    "a\\b",
    "a\0b",
    ".hidden",
    "-x",
    "a b",
    "é",
    "a".repeat(129),
    "a".repeat(200),
  ])("refuses %j", (id) => {
    expect(isValidSessionId(id)).toBe(false);
  });

  it("refuses values that are not strings", () => {
    expect(isValidSessionId(42)).toBe(false);
    expect(isValidSessionId(undefined)).toBe(false);
  });
});

describe("assertValidSessionId", () => {
  it("returns a valid id unchanged", () => {
    expect(assertValidSessionId("sess-1")).toBe("sess-1");
  });

  it.each([
    ["../x", "contains a path separator"],
    ["a/b", "contains a path separator"],
    ["..", "is a relative path"],
    ["", "is empty"],
    ["a".repeat(200), "is 200 characters long; the limit is 128"],
    ["a b", 'contains " "'],
    ["_x", "does not start with a letter or digit"],
  ])("refuses %j with INVALID_ARGUMENT saying it %s", (id, problem) => {
    let caught: unknown;
    try {
      assertValidSessionId(id);
    } catch (err) {
      caught = err;
    }
    expect(isSwitchboardError(caught, ErrorCodes.INVALID_ARGUMENT)).toBe(true);
    expect((caught as Error).message).toContain(problem);
    expect((caught as Error).message).toContain("A session id is a UUID");
  });
});
