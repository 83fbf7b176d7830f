import { describe, expect, it } from "vitest";
import { DEFAULT_PARTITIONS, partOf } from "../../src/routing/partition.js";

describe("partOf", () => {
  // Fixed for ever: a change here would move every stored session to another partition (and owner).
  // The values are FNV-1a (32 bits) of the key's UTF-8 bytes, mod the count; checked against an
  // independent implementation (Python) when they were written.
  it("gives every session key the same partition for ever (fixed vectors of FNV-1a mod the count)", () => {
    const vectors: Array<[string, number, number]> = [
      ["agent:main:main", 116, 4],
      ["agent:main:telegram:dm:42", 197, 5],
      ["agent:main:discord:channel:123456789012345678", 17, 1],
      ["agent:ops:hook:abc", 7, 7],
      ["agent:main:subagent:x1", 107, 11],
      ["agent:main:telegram:group:-100:topic:7", 27, 11],
      ["agent:main:webchat:dm:zoë", 199, 7],
      ["a", 44, 12],
    ];
    for (const [key, of256, of16] of vectors) {
      expect(partOf(key), key).toBe(of256);
      expect(partOf(key, 16), key).toBe(of16);
    }
    expect(DEFAULT_PARTITIONS).toBe(256);
  });

  it("spreads many sessions evenly over the 256 partitions", () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 25_600; i++) counts[partOf(`agent:main:telegram:dm:${1_000_000 + i}`)]! += 1;
    // 100 a partition on average; a fair hash keeps every one well inside 50..150.
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(150);
  });
});
