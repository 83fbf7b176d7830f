import { describe, expect, it } from "vitest";
import { telegramTargets } from "../../adapters/telegram/telegram-target.js";
import { parseDeliveryTarget } from "../../src/delivery/delivery-target.js";

describe("parseDeliveryTarget", () => {
  it.each([
    ["telegram:123456789", { channel: "telegram", to: "123456789" }],
    ["telegram:-1001234567890:topic:42", { channel: "telegram", to: "-1001234567890", threadId: "42" }],
    ["Telegram:@mychannel", { channel: "telegram", to: "@mychannel" }],
    ["discord:channel:123", { channel: "discord", to: "channel:123" }],
    ["discord:channel:123:thread:456", { channel: "discord", to: "channel:123", threadId: "456" }],
    ["whatsapp:+15551234567", { channel: "whatsapp", to: "+15551234567" }],
  ])("reads %s", (raw, expected) => {
    expect(parseDeliveryTarget(raw)).toEqual(expected);
  });

  it.each(["telegram", "telegram:", ":123", "last", "1telegram:5"])("refuses %s with the syntax", (raw) => {
    expect(() => parseDeliveryTarget(raw)).toThrow(/is not a delivery target: write <channel>:<to>/);
  });

  it("lets the channel's adapter decode the rest, and refuses what it cannot read with its own forms", () => {
    const codecOf = (channel: string) => (channel === "telegram" ? telegramTargets : undefined);
    expect(parseDeliveryTarget("telegram:-1001234567890:topic:42", codecOf)).toEqual({
      channel: "telegram",
      to: "-1001234567890",
      threadId: "42",
    });
    expect(() => parseDeliveryTarget("telegram:not-a-chat", codecOf)).toThrow(
      /"telegram:not-a-chat" is not a telegram target: .*numeric chat id/,
    );
    // a channel without a running adapter keeps the opaque reading
    expect(parseDeliveryTarget("discord:channel:123", codecOf)).toEqual({ channel: "discord", to: "channel:123" });
  });

  it("refuses a channel that does not run when the target must be deliverable now (a webhook)", () => {
    expect(() => parseDeliveryTarget("telegram:abc", () => undefined, { running: true })).toThrow(
      '"telegram:abc" names telegram, which this gateway does not run: set up channels.telegram in the config, or deliver to a channel it runs (or "last")',
    );
  });
});
