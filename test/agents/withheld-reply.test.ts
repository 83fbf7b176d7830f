import { describe, expect, it } from "vitest";
import { markWithheld } from "../../src/agents/withheld-reply.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import type { TranscriptMessage } from "../../src/sessions/transcripts/index.js";

const key = parseSessionKey("agent:main:telegram:dm:42")!;
const turn: TranscriptMessage[] = [
  { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "sessions_list", arguments: {} }], timestamp: 1 },
  { role: "toolResult", content: "[]", timestamp: 2 },
  { role: "assistant", content: "Here you are.", timestamp: 3 },
];
const entry = (sendPolicy?: "allow" | "deny") => ({ sessionId: "s", updatedAt: 1, ...(sendPolicy && { sendPolicy }) });

describe("markWithheld", () => {
  it("marks only the reply (the last assistant message) when /send off keeps it from the chat", () => {
    const kept = markWithheld(turn, { policy: undefined, entry: entry("deny"), key, channel: "telegram" });
    expect(kept.map((m) => m.withheld)).toEqual([undefined, undefined, true]);
    expect(turn[2]!.withheld).toBeUndefined();
  });

  it("marks nothing when the reply is delivered, or when the turn delivers nowhere", () => {
    expect(markWithheld(turn, { policy: undefined, entry: entry("allow"), key, channel: "telegram" })).toBe(turn);
    expect(markWithheld(turn, undefined)).toBe(turn);
  });

  it("follows a deny rule of session.sendPolicy too", () => {
    const policy = { default: "allow" as const, rules: [{ action: "deny" as const, match: { channel: "telegram" } }] };
    const kept = markWithheld(turn, { policy, entry: entry(), key, channel: "telegram" });
    expect(kept.at(-1)?.withheld).toBe(true);
  });
});
