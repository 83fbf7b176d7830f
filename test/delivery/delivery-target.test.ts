import { describe, expect, it } from "vitest";
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
});
