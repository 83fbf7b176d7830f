import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessage } from "../../../adapters/discord/index.js";

const limits = { maxLength: 2000, maxLines: 17 };
const fences = (piece: string) => piece.split("\n").filter((line) => /^ {0,3}```/.test(line)).length;

describe("splitMessage", () => {
  it("keeps a short message whole", () => {
    expect(splitMessage("hello\nworld", limits)).toEqual(["hello\nworld"]);
  });

  it("splits a 2,500-character text into two messages of at most 2000 characters", () => {
    const text = Array.from({ length: 500 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
    const pieces = splitMessage(text, limits);
    expect(pieces).toHaveLength(2);
    expect(pieces.every((p) => p.length <= 2000)).toBe(true);
    expect(pieces.join(" ")).toBe(text);
  });

  it("splits 30 lines into pieces of at most 17 lines, every piece's code fences balanced", () => {
    const text = ["intro", "```py", ...Array.from({ length: 26 }, (_, i) => `print(${i})`), "```", "outro"].join("\n");
    const pieces = splitMessage(text, limits);
    expect(pieces).toHaveLength(2);
    for (const piece of pieces) {
      expect(piece.split("\n").length).toBeLessThanOrEqual(17);
      expect(fences(piece) % 2).toBe(0);
    }
    expect(pieces[1]!.startsWith("```py\n")).toBe(true);
  });

  it("never loses a line and never exceeds the limits (property)", () => {
    const line = fc.oneof(
      fc.constant("```"),
      fc.constant("```js"),
      fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, " ")),
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 80 }), (lines) => {
        const text = lines.join("\n");
        if (!text.trim()) return;
        const pieces = splitMessage(text, limits);
        for (const piece of pieces) {
          expect(piece.length).toBeLessThanOrEqual(2000);
          expect(piece.split("\n").length).toBeLessThanOrEqual(17);
        }
        const withoutFences = (t: string) => t.split("\n").filter((l) => !/^ {0,3}```/.test(l) && l.trim() !== "");
        expect(pieces.flatMap(withoutFences)).toEqual(withoutFences(text));
      }),
      { numRuns: 200 },
    );
  });
});
