import { describe, expect, it } from "vitest";
import {
  deliveryContextKey,
  entryDeliveryContext,
  lastRoutePatch,
  normalizeDeliveryContext,
} from "../../src/sessions/delivery-context.js";

describe("normalizeDeliveryContext", () => {
  it("trims every field and drops a context with no channel", () => {
    expect(normalizeDeliveryContext({ channel: " WhatsApp ", to: " +1555 ", accountId: " acct-1 " })).toEqual({
      channel: "whatsapp",
      to: "+1555",
      accountId: "acct-1",
    });
    expect(normalizeDeliveryContext({ channel: "  " })).toBeUndefined();
  });

  it("truncates numeric thread ids and trims string ones", () => {
    expect(normalizeDeliveryContext({ channel: "telegram", to: "1", threadId: 42.9 })).toEqual({
      channel: "telegram",
      to: "1",
      threadId: 42,
    });
    expect(normalizeDeliveryContext({ channel: "slack", to: "c", threadId: " 1712.5 " })).toEqual({
      channel: "slack",
      to: "c",
      threadId: "1712.5",
    });
  });
});

describe("deliveryContextKey", () => {
  it("joins the fields, only when channel and target exist", () => {
    expect(deliveryContextKey({ channel: "whatsapp", to: "+1555" })).toBe("whatsapp|+1555||");
    expect(deliveryContextKey({ channel: "whatsapp" })).toBeUndefined();
    expect(deliveryContextKey({ channel: "slack", to: "channel:C1", threadId: "123.456" })).toBe(
      "slack|channel:C1||123.456",
    );
  });
});

describe("lastRoutePatch", () => {
  it("mirrors the route into the legacy last* fields", () => {
    expect(lastRoutePatch({ channel: " WhatsApp ", to: " +1555 ", accountId: " acct-1 " })).toEqual({
      deliveryContext: { channel: "whatsapp", to: "+1555", accountId: "acct-1" },
      lastChannel: "whatsapp",
      lastTo: "+1555",
      lastAccountId: "acct-1",
      lastThreadId: undefined,
    });
  });

  it("no sticky thread: a route without a thread clears the old one", () => {
    expect(lastRoutePatch({ channel: "telegram", to: "222" })).toMatchObject({
      deliveryContext: { channel: "telegram", to: "222" },
      lastThreadId: undefined,
    });
  });
});

describe("entryDeliveryContext", () => {
  it("reads the legacy last* fields when an old entry has no deliveryContext", () => {
    expect(entryDeliveryContext({ sessionId: "s", updatedAt: 1, lastChannel: "whatsapp", lastTo: "+1555" })).toEqual({
      channel: "whatsapp",
      to: "+1555",
    });
    expect(entryDeliveryContext({ sessionId: "s", updatedAt: 1 })).toBeUndefined();
  });
});
