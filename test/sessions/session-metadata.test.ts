import { describe, expect, it } from "vitest";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { buildGroupDisplayName, conversationLabel, inboundMetadataPatch } from "../../src/sessions/session-metadata.js";

const message = (raw: Record<string, unknown>) => InboundMessageSchema.parse({ sender: { id: "1" }, ...raw });

describe("buildGroupDisplayName", () => {
  it.each([
    [
      "Discord channel in a space",
      { channel: "discord", id: "1", groupChannel: "#general", space: "friends-of-clawd" },
      "discord:friends-of-clawd#general",
    ],
    ["WhatsApp subject", { channel: "whatsapp", id: "123@g.us", subject: "Family Chat!" }, "whatsapp:g-family-chat"],
    ["Slack channel name", { channel: "slack", id: "C1", groupChannel: "#ops" }, "slack:#ops"],
    ["Telegram id only", { channel: "telegram", id: "-1001234567890" }, "telegram:g-1001234567890"],
  ])("%s", (_name, input, expected) => {
    expect(buildGroupDisplayName(input)).toBe(expected);
  });
});

describe("conversationLabel", () => {
  it("labels groups by title with the numeric id, channels by name, DMs by sender", () => {
    expect(conversationLabel(message({ channel: "telegram", chat: { type: "group", id: "42", title: "Ops" } }))).toBe(
      "Ops id:42",
    );
    expect(
      conversationLabel(message({ channel: "discord", chat: { type: "channel", id: "C123", title: "#general" } })),
    ).toBe("#general");
    expect(
      conversationLabel(
        message({ channel: "telegram", chat: { type: "direct", id: "7" }, sender: { id: "7", name: "Ada" } }),
      ),
    ).toBe("Ada");
  });
});

describe("inboundMetadataPatch", () => {
  it("records origin, labels and the route of a WhatsApp group, never updatedAt", () => {
    const patch = inboundMetadataPatch(
      message({ channel: "whatsapp", accountId: "work", chat: { type: "group", id: "123@g.us", title: "Family" } }),
      undefined,
    );
    expect(patch).toMatchObject({
      origin: {
        label: "Family id:123@g.us",
        channel: "whatsapp",
        chatType: "group",
        to: "123@g.us",
        accountId: "work",
      },
      channel: "whatsapp",
      chatType: "group",
      subject: "Family",
      groupId: "123@g.us",
      displayName: "whatsapp:g-family",
      deliveryContext: { channel: "whatsapp", to: "123@g.us", accountId: "work" },
    });
    expect(patch).not.toHaveProperty("updatedAt");
  });

  it("keeps the forum topic in the route and merges the origin over the old one", () => {
    const current = { sessionId: "s", updatedAt: 1, origin: { label: "old", from: "telegram:group:-1" } };
    const patch = inboundMetadataPatch(
      message({
        channel: "telegram",
        chat: { type: "group", id: "-100", isForum: true, threadId: "99", title: "Team" },
      }),
      current,
    );
    expect(patch.deliveryContext).toEqual({ channel: "telegram", to: "-100", accountId: "default", threadId: "99" });
    expect(patch.origin).toMatchObject({ label: "Team id:-100", threadId: "99" });
  });
});
