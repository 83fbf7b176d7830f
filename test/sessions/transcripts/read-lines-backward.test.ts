import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readLinesBackward } from "../../../src/sessions/transcripts/read-lines-backward.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "switchboard-lines-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function linesOf(text: string, chunkSize: number, end = Buffer.byteLength(text)) {
  const file = path.join(dir, "f.jsonl");
  await writeFile(file, text);
  const handle = await open(file, "r");
  try {
    const out: { offset: number; text: string; terminated: boolean }[] = [];
    for await (const line of readLinesBackward(handle, end, chunkSize))
      out.push({ offset: line.offset, text: line.bytes.toString("utf8"), terminated: line.terminated });
    return out;
  } finally {
    await handle.close();
  }
}

/** What reading forwards gives: non-empty lines with their byte offsets, newest first. */
function expected(text: string) {
  const out: { offset: number; text: string; terminated: boolean }[] = [];
  let offset = 0;
  const parts = text.split("\n");
  parts.forEach((part, i) => {
    if (part.length > 0) out.push({ offset, text: part, terminated: i < parts.length - 1 });
    offset += Buffer.byteLength(part) + 1;
  });
  return out.reverse();
}

describe("readLinesBackward", () => {
  it("yields lines newest first with their byte offsets", async () => {
    expect(await linesOf("a\nbb\nccc\n", 4)).toEqual([
      { offset: 5, text: "ccc", terminated: true },
      { offset: 2, text: "bb", terminated: true },
      { offset: 0, text: "a", terminated: true },
    ]);
  });

  it("marks the bytes after the last newline as not terminated", async () => {
    expect((await linesOf('a\n{"tor', 3))[0]).toEqual({ offset: 2, text: '{"tor', terminated: false });
  });

  it("reads only up to `end`", async () => {
    expect(await linesOf("a\nbb\nccc\n", 2, 5)).toEqual([
      { offset: 2, text: "bb", terminated: true },
      { offset: 0, text: "a", terminated: true },
    ]);
  });

  it("matches a forward split for any text and chunk size", async () => {
    const text = fc.string({ unit: fc.constantFrom("a", "é", "\n", "{", "😀"), maxLength: 80 });
    await fc.assert(
      fc.asyncProperty(text, fc.integer({ min: 1, max: 20 }), async (content, chunkSize) => {
        expect(await linesOf(content, chunkSize)).toEqual(expected(content));
      }),
      { numRuns: 150 },
    );
  });
});
