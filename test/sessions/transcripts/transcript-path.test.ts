import path from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCodes, SwitchboardError } from "../../../src/errors.js";
import {
  parseTranscriptFileName,
  resolveTranscriptPath,
  transcriptFileName,
} from "../../../src/sessions/transcripts/index.js";

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

describe("resolveTranscriptPath", () => {
  const dir = path.resolve("/state/agents/main/sessions");

  it("maps a bare session id to <id>.jsonl in the folder", () => {
    expect(resolveTranscriptPath(dir, "sess-1")).toBe(path.join(dir, "sess-1.jsonl"));
  });

  it("keeps a file name, or an absolute path inside the folder", () => {
    expect(resolveTranscriptPath(dir, "sess-1-topic-9.jsonl")).toBe(path.join(dir, "sess-1-topic-9.jsonl"));
    expect(resolveTranscriptPath(dir, path.join(dir, "sess-1.jsonl"))).toBe(path.join(dir, "sess-1.jsonl"));
  });

  it.each(["../x", "..", "a/b", "", "../x.jsonl", "../../etc/passwd.jsonl", "/etc/x.jsonl", "a\0.jsonl"])(
    "refuses %j",
    (ref) => {
      expect(() => resolveTranscriptPath(dir, ref)).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }),
      );
    },
  );
});
