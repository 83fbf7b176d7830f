import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkText } from "../../src/delivery/chunk-text.js";

const nonSpace = (text: string) => text.replace(/\s/g, "");
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;
const withoutFenceLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => !FENCE_LINE.test(line))
    .join("\n");

// Text pieces that make every split rule fire: words, long words, spaces, newlines, blank lines, emoji.
const piece = fc.constantFrom(
  "a",
  "bc",
  "word",
  "supercalifragilistic",
  " ",
  "  ",
  "\t",
  "\n",
  "\n\n",
  "\n \n",
  "😀",
  "é",
  "👩‍💻",
  "x😀y",
);
const plainText = fc.string({ unit: piece, maxLength: 120 });

// Markdown-ish text: paragraphs and closed fenced blocks, the last block possibly left open.
const line = fc.string({
  unit: fc.constantFrom("a", "be", "code", " ", "😀", "()", "  "),
  minLength: 1,
  maxLength: 30,
});
const fenced = (closed: boolean) =>
  fc
    .tuple(fc.constantFrom("```", "```ts", "```python", "~~~"), fc.array(line, { maxLength: 8 }))
    .map(([open, body]) => [open, ...body, ...(closed ? [open.slice(0, 3)] : [])].join("\n"));
const markdown = fc
  .tuple(fc.array(fc.oneof(line, fc.constant(""), fenced(true)), { maxLength: 12 }), fc.option(fenced(false)))
  .map(([blocks, open]) => [...blocks, ...(open ? [open] : [])].join("\n"));

describe("chunkText", () => {
  it("returns short text as one chunk and blank text as none", () => {
    expect(chunkText("hello world", 20)).toEqual(["hello world"]);
    expect(chunkText(" \n\t ", 20)).toEqual([]);
    expect(chunkText("", 20)).toEqual([]);
  });

  it("prefers a blank line, then a newline, then a space", () => {
    expect(chunkText("one two\nthree\n\nfour five", 20)).toEqual(["one two\nthree", "four five"]);
    expect(chunkText("one two\nthree four five", 20)).toEqual(["one two", "three four five"]);
    expect(chunkText("one two three four five six", 14)).toEqual(["one two three", "four five six"]);
  });

  it("cuts a word longer than the limit, never inside a surrogate pair", () => {
    expect(chunkText("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(chunkText("abc😀😀", 4)).toEqual(["abc", "😀😀"]);
  });

  it("fills a chunk instead of leaving a few characters before a word that must be split anyway", () => {
    const word = "x".repeat(50);
    expect(chunkText(`Echo: ${word}`, 40)).toEqual([`Echo: ${word.slice(0, 34)}`, word.slice(34)]);
    expect(chunkText(`Echo:\n${"word ".repeat(20).trim()}`, 100)[0]).toBe(`Echo:\n${"word ".repeat(18)}word`);
    // A short first chunk stays when what follows fits in the next one.
    expect(chunkText("Hi\nthe rest of it", 16)).toEqual(["Hi", "the rest of it"]);
  });

  it("keeps the indentation of the line after a split", () => {
    expect(chunkText("first line\n    indented line", 18)).toEqual(["first line", "    indented line"]);
  });

  it("closes a split code block and reopens it with the same info string", () => {
    const text = ["Intro", "", "```ts", "const a = 1;", "const b = 2;", "const c = 3;", "```", "", "Done"].join("\n");
    const chunks = chunkText(text, 36);
    expect(chunks).toEqual(["Intro", "```ts\nconst a = 1;\nconst b = 2;\n```", "```ts\nconst c = 3;\n```\n\nDone"]);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(36);
  });

  it("moves a block's own closer into the chunk it closes instead of leaving an empty block", () => {
    const text = `\`\`\`\n${"x".repeat(10)}\n\`\`\`\nafter`;
    expect(chunkText(text, 18)).toEqual(["```\nxxxxxxxxxx\n```", "after"]);
  });

  it("splits 5,000 characters for a 4,000 limit into two chunks that keep every word", () => {
    const text = Array.from({ length: 1000 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
    const chunks = chunkText(text, 4000);
    expect(chunks).toHaveLength(2);
    expect(chunks.join(" ")).toBe(text);
  });

  it("keeps every chunk within the limit and every non-space character in order (property)", () => {
    fc.assert(
      fc.property(plainText, fc.integer({ min: 2, max: 40 }), (text, limit) => {
        const chunks = chunkText(text, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(chunk.trim()).not.toBe("");
          expect(chunk).not.toMatch(loneSurrogate);
        }
        expect(nonSpace(chunks.join(""))).toBe(nonSpace(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps split code blocks balanced and loses nothing but fence lines it adds (property)", () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 24, max: 80 }), (text, limit) => {
        const chunks = chunkText(text, limit);
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(limit);
        expect(nonSpace(withoutFenceLines(chunks.join("\n")))).toBe(nonSpace(withoutFenceLines(text)));
        // Every chunk but the last ends outside a code block.
        for (const chunk of chunks.slice(0, -1)) {
          const fences = chunk.split("\n").filter((l) => FENCE_LINE.test(l)).length;
          expect(fences % 2).toBe(0);
        }
      }),
      { numRuns: 1000 },
    );
  });

  describe("with a line limit", () => {
    const lines = (chunk: string) => chunk.split("\n").length;

    it("splits a long code block into chunks of at most 17 lines that each open and close the block", () => {
      const code = Array.from({ length: 40 }, (_, i) => `const line${i} = ${i};`);
      const text = ["Here is the file:", "```ts", ...code, "```", "That is all."].join("\n");
      const chunks = chunkText(text, 2000, { maxLines: 17 });
      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) expect(lines(chunk)).toBeLessThanOrEqual(17);
      for (const chunk of chunks.slice(1, -1)) {
        expect(chunk.startsWith("```ts\n")).toBe(true);
        expect(chunk.endsWith("\n```")).toBe(true);
      }
      expect(chunks.at(-1)).toMatch(/That is all\.$/);
      expect(
        withoutFenceLines(chunks.join("\n"))
          .split("\n")
          .filter((l) => l.startsWith("const")),
      ).toEqual(code);
    });

    it("keeps a short text of few lines whole", () => {
      expect(chunkText("one\ntwo\nthree", 100, { maxLines: 3 })).toEqual(["one\ntwo\nthree"]);
    });

    it("refuses a line limit too small to close and reopen a block, naming the value", () => {
      expect(() => chunkText("text", 100, { maxLines: 2 })).toThrow(
        /line limit must be an integer of at least 3, got 2/,
      );
    });

    it("keeps every chunk within both limits and every non-space character in order (property)", () => {
      fc.assert(
        fc.property(plainText, fc.integer({ min: 2, max: 60 }), fc.integer({ min: 3, max: 8 }), (text, limit, max) => {
          const chunks = chunkText(text, limit, { maxLines: max });
          for (const chunk of chunks) {
            expect(chunk.length).toBeLessThanOrEqual(limit);
            expect(lines(chunk)).toBeLessThanOrEqual(max);
            expect(chunk).toMatch(/\S/);
          }
          expect(nonSpace(chunks.join(""))).toBe(nonSpace(text));
        }),
        { numRuns: 1000 },
      );
    });

    it("keeps split code blocks balanced within both limits and loses nothing but added fence lines (property)", () => {
      fc.assert(
        fc.property(
          markdown,
          fc.integer({ min: 24, max: 200 }),
          fc.integer({ min: 3, max: 17 }),
          (text, limit, max) => {
            const chunks = chunkText(text, limit, { maxLines: max });
            for (const chunk of chunks) {
              expect(chunk.length).toBeLessThanOrEqual(limit);
              expect(lines(chunk)).toBeLessThanOrEqual(max);
            }
            expect(nonSpace(withoutFenceLines(chunks.join("\n")))).toBe(nonSpace(withoutFenceLines(text)));
            for (const chunk of chunks.slice(0, -1)) {
              const fences = chunk.split("\n").filter((l) => FENCE_LINE.test(l)).length;
              expect(fences % 2).toBe(0);
            }
          },
        ),
        { numRuns: 1000 },
      );
    });
  });
});
