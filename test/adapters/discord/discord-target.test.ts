import { describe, expect, it } from "vitest";
import { discordTargets, parseDiscordTarget } from "../../../adapters/discord/index.js";
import { DeliveryError } from "../../../src/index.js";

describe("discordTargets", () => {
  it.each(["channel:700000000000000001", "user:600000000000000001"])("round-trips %s", (text) => {
    const target = discordTargets.decode(text);
    expect(target).toEqual({ channel: "discord", to: text });
    expect(discordTargets.encode(target)).toBe(text);
  });

  it("reads a mention as a user and tolerates a leaked discord: prefix", () => {
    expect(discordTargets.decode("<@!600000000000000001>").to).toBe("user:600000000000000001");
    expect(discordTargets.decode("discord:channel:7").to).toBe("channel:7");
  });

  it("encodes the bare channel id a session recorded as channel:<id>", () => {
    expect(discordTargets.encode({ channel: "discord", to: "700000000000000001" })).toBe("channel:700000000000000001");
    expect(parseDiscordTarget({ channel: "discord", to: "700000000000000001" })).toEqual({
      kind: "channel",
      id: "700000000000000001",
    });
  });

  it.each([
    ["700000000000000001", /could be a channel or a user/],
    ["channel:general", /is not a Discord id/],
    ["guild:1", /unknown form/],
  ])("refuses %s with the forms it accepts", (text, why) => {
    let error: unknown;
    try {
      discordTargets.decode(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error).toMatchObject({ reason: "bad_target", retryable: false });
    expect((error as Error).message).toMatch(why);
    expect((error as Error).message).toMatch(/channel:<id>.*user:<id>/);
  });
});
