import { describe, expect, it } from "vitest";
import { ANNOUNCE_SKIP, REPLY_SKIP, isSkipToken } from "../../src/tools/skip-tokens.js";

describe("isSkipToken", () => {
  it.each([
    ["ANNOUNCE_SKIP", ANNOUNCE_SKIP],
    [" ANNOUNCE_SKIP \n", ANNOUNCE_SKIP],
    ['"ANNOUNCE_SKIP"', ANNOUNCE_SKIP],
    ["`ANNOUNCE_SKIP`", ANNOUNCE_SKIP],
    ["announce_skip", ANNOUNCE_SKIP],
    ["**REPLY_SKIP**", REPLY_SKIP],
    ["reply_skip.", REPLY_SKIP],
    ["REPLY_SKIP!", REPLY_SKIP],
    [" REPLY_SKIP ", REPLY_SKIP],
    ["_REPLY_SKIP_", REPLY_SKIP],
  ])("recognises %j as %s (lenient)", (reply, token) => {
    expect(isSkipToken(reply, token)).toBe(true);
  });

  it.each([
    ["ANNOUNCE_SKIP please", ANNOUNCE_SKIP],
    ["I will ANNOUNCE_SKIP", ANNOUNCE_SKIP],
    ["ANNOUNCE_SKIP\nbut here is the result", ANNOUNCE_SKIP],
    ["ANNOUNCE SKIP", ANNOUNCE_SKIP],
    ["REPLY_SKIP", ANNOUNCE_SKIP],
    ["ANNOUNCE_SKIP", REPLY_SKIP],
    ["", REPLY_SKIP],
    [undefined, REPLY_SKIP],
  ])("does not take %j for %s", (reply, token) => {
    expect(isSkipToken(reply, token)).toBe(false);
  });
});
