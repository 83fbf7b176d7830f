import { describe, expect, it } from "vitest";
import { createRecentMessages } from "../../../src/sessions/transcripts/recent-messages.js";
import type { TranscriptMessage } from "../../../src/sessions/transcripts/index.js";

const message = (text: string): TranscriptMessage => ({ role: "user", content: text, timestamp: 1 });
const texts = (messages: readonly TranscriptMessage[] | undefined) => messages?.map((m) => m.content);

describe("createRecentMessages", () => {
  it("keeps the newest messages per file and drops the least recently used file past the byte budget", () => {
    const recent = createRecentMessages({ messages: 2, fileBytes: 100, totalBytes: 200 });
    recent.put("a", 0, [message("a1")], [50]);
    recent.put("b", 0, [message("b1")], [100]);
    recent.get("a", 2); // a is now the most recently used
    recent.appended("a", message("a2"), 10);
    recent.appended("a", message("a3"), 10); // a1 drops off: two messages per file
    expect(texts(recent.get("a", 5))).toEqual(["a2", "a3"]);
    recent.put("c", 0, [message("c1")], [100]); // 20 + 100 + 100 > 200: b, the least recently used, goes
    expect(recent.get("b", 5)).toBeUndefined();
    expect(texts(recent.get("c", 5))).toEqual(["c1"]);
  });

  it("does not keep a file whose newest messages are too big, nor a read that raced an append", () => {
    const recent = createRecentMessages({ messages: 5, fileBytes: 100, totalBytes: 1_000 });
    recent.put("big", 0, [message("x")], [101]);
    expect(recent.get("big", 5)).toBeUndefined();
    const before = recent.version("raced");
    recent.appended("raced", message("new"), 10);
    recent.put("raced", before, [message("old")], [10]);
    expect(recent.get("raced", 5)).toBeUndefined();
    recent.put("grows", 0, [message("g1")], [60]);
    recent.appended("grows", message("g2"), 60);
    expect(recent.get("grows", 5)).toBeUndefined();
  });
});
