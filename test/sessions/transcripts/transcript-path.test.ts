import path from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCodes, SwitchboardError } from "../../../src/errors.js";
import { parseTranscriptFileName, transcriptFileName } from "../../../src/sessions/transcripts/index.js";
import {
  assertTranscriptId,
  transcriptFile,
  transcriptId,
  transcriptIdOfFile,
} from "../../../src/sessions/transcripts/transcript-path.js";

describe("transcriptFileName", () => {
  it.each([
    ["sess-1", undefined, "sess-1.jsonl"],
    ["sess-1", 123, "sess-1-topic-123.jsonl"],
    ["sess-1", "123", "sess-1-topic-123.jsonl"],
    ["sess-1", "abc/def", "sess-1-topic-abc%2Fdef.jsonl"],
    ["sess-1", "../..", "sess-1-topic-..%2F...jsonl"],
  ] as const)("names %j with topic %j as %j", (sessionId, topicId, name) => {
    expect(transcriptFileName(sessionId, topicId)).toBe(name);
  });

  it("refuses an invalid session id", () => {
    expect(() => transcriptFileName("../x")).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }));
  });

  it("refuses an empty or non-finite topic id", () => {
    expect(() => transcriptFileName("s", "")).toThrow(SwitchboardError);
    expect(() => transcriptFileName("s", Number.NaN)).toThrow(SwitchboardError);
  });
});

describe("parseTranscriptFileName", () => {
  it.each([
    ["sess-1.jsonl", { sessionId: "sess-1" }],
    ["sess-1-topic-123.jsonl", { sessionId: "sess-1", topicId: "123" }],
    ["sess-1-topic-abc%2Fdef.jsonl", { sessionId: "sess-1", topicId: "abc/def" }],
    ["sess-1.json", null],
    ["../x.jsonl", null],
  ])("reads %j as %j", (name, parsed) => {
    expect(parseTranscriptFileName(name)).toEqual(parsed);
  });

  it("inverts transcriptFileName", () => {
    expect(parseTranscriptFileName(transcriptFileName("1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", "a b/c"))).toEqual({
      sessionId: "1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
      topicId: "a b/c",
    });
  });
});

describe("transcript ids", () => {
  const dir = path.resolve("/state/agents/main/sessions");

  it("maps an id to <id>.jsonl in the folder", () => {
    expect(transcriptFile(dir, "sess-1")).toBe(path.join(dir, "sess-1.jsonl"));
    expect(transcriptFile(dir, transcriptId("sess-1", "a/b"))).toBe(path.join(dir, "sess-1-topic-a%2Fb.jsonl"));
  });

  it("reads the id of an entry's sessionFile, a file name or an older absolute path", () => {
    expect(transcriptIdOfFile("sess-1-topic-9.jsonl")).toBe("sess-1-topic-9");
    expect(transcriptIdOfFile("/home/ann/.clawdbot/agents/main/sessions/s-main.jsonl")).toBe("s-main");
    expect(transcriptIdOfFile("notes.txt")).toBeNull();
  });

  it.each(["../x", "..", "a/b", "", "s-topic-a/b", "../x.jsonl", "sess-1.jsonl", "/etc/x", "a\0"])(
    "refuses %j with a clear error",
    (id) => {
      expect(() => transcriptFile(dir, id)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }));
    },
  );

  it("names the fix when given a file name", () => {
    expect(() => assertTranscriptId("sess-1.jsonl")).toThrow(/not a file name; transcriptRef\(entry\) gives it/);
  });
});
