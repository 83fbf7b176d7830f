import fc from "fast-check";
import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { MalformedUpdateError } from "../../../adapters/telegram/message-shape.js";
import { toInbound } from "../../../adapters/telegram/to-inbound.js";
import { InboundMessageSchema } from "../../../src/index.js";
import { mutatedUpdate, strangeUpdate } from "../../fakes/bad-telegram-updates.js";

const BOT = { id: 123456, username: "SwitchboardTestBot" };

/** What toInbound may do with any input: ignore it, refuse it by name, or map it to a valid message. */
function outcome(update: unknown): "ignored" | "refused" | "mapped" {
  let message: ReturnType<typeof toInbound>;
  try {
    message = toInbound(update as Update, BOT, "default");
  } catch (err) {
    expect(err).toBeInstanceOf(MalformedUpdateError);
    return "refused";
  }
  if (message === null) return "ignored";
  const checked = InboundMessageSchema.safeParse(message);
  expect(checked.success).toBe(true);
  // Ids are the platform's numbers, never "undefined" or "[object Object]".
  for (const id of [message.chat.id, message.sender.id, message.messageId!]) expect(id).toMatch(/^-?\d+$/);
  return "mapped";
}

describe("toInbound on malformed updates (seeded fuzz)", () => {
  it("ignores, refuses with MalformedUpdateError, or maps to a valid inbound message: never anything else", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.oneof(mutatedUpdate, strangeUpdate), (update) => {
        seen.add(outcome(update));
      }),
      { seed: 20261123, numRuns: 3_000 },
    );
    // The generator reaches all three outcomes, so the property is not vacuous.
    expect([...seen].sort()).toEqual(["ignored", "mapped", "refused"]);
  });

  it("names the field that is wrong", () => {
    const update = {
      update_id: 1,
      message: {
        message_id: "ten",
        date: 1,
        chat: { id: 1, type: "private" },
        from: { id: 1, first_name: "A" },
        text: "hi",
      },
    };
    expect(() => toInbound(update as unknown as Update, BOT)).toThrow(/message_id/);
  });
});
