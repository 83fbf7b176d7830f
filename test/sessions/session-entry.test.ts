import { describe, expect, it } from "vitest";
import { applyEntryChange, type SessionEntryPatch, SessionEntrySchema } from "../../src/sessions/session-entry.js";

const stored = SessionEntrySchema.parse({
  sessionId: "s1",
  updatedAt: 1,
  label: "kept",
  origin: { channel: "telegram", extra: "from another tool" },
  customField: { any: "thing" },
});

// Every kind of change a caller can make: valid and invalid values, removals, nested objects, unknown fields.
const changes: SessionEntryPatch[] = [
  { label: "new" },
  { label: 5 as unknown as string },
  { label: undefined },
  { sessionId: undefined },
  { sessionId: "" },
  { updatedAt: "soon" as unknown as number },
  { inputTokens: -1 },
  { inputTokens: 1.5 },
  { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
  { chatType: "forum" as "group" },
  { deliveryContext: { channel: "discord", to: "c1", threadId: 7 } },
  { deliveryContext: { to: "c1" } as unknown as { channel: string } },
  { origin: { label: "Ops", unknownInside: true } as Record<string, unknown> },
  { somethingNew: [1, 2] },
  { sendPolicy: "deny", abortedLastRun: true },
  { sendPolicy: "maybe" as "deny" },
  // Unknown fields named like Object's own methods, as a stored row may carry them.
  { constructor: "x" },
  { toString: "x", hasOwnProperty: undefined },
  JSON.parse('{"__proto__": 5}') as SessionEntryPatch,
];

describe("applyEntryChange", () => {
  it.each(changes.map((change) => [JSON.stringify(change) ?? "", change] as const))(
    "gives a stored entry's change %s the verdict and result of checking the whole entry",
    (_name, change) => {
      const merged: Record<string, unknown> = { ...stored };
      for (const [field, value] of Object.entries(change)) {
        if (value === undefined) delete merged[field];
        else merged[field] = value;
      }
      const whole = SessionEntrySchema.safeParse(merged);
      const result = applyEntryChange(stored, change);
      expect(result.ok).toBe(whole.success);
      if (result.ok && whole.success) expect(result.entry).toEqual(whole.data);
      if (!result.ok && !whole.success)
        expect(result.issues).toEqual(whole.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
    },
  );

  it("checks a new entry whole: one without a sessionId is refused", () => {
    const result = applyEntryChange(undefined, { label: "no id", updatedAt: 1 });
    expect(result).toEqual({ ok: false, issues: [expect.stringMatching(/^sessionId: /)] });
  });

  it("leaves the stored entry as it was", () => {
    const before = structuredClone(stored);
    applyEntryChange(stored, { label: "changed", customField: undefined });
    expect(stored).toEqual(before);
  });
});
