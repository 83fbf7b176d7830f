import { describe, expect, it } from "vitest";
import {
  COMPACTION_MARKER,
  compactionMessage,
  isCompactionMarker,
  sinceLastCompaction,
} from "../../src/agents/compaction-marker.js";
import type { TranscriptMessage } from "../../src/sessions/transcripts/index.js";

const message = (role: TranscriptMessage["role"], content: string): TranscriptMessage => ({
  role,
  content,
  timestamp: 0,
});

describe("sinceLastCompaction", () => {
  it("starts at the last compaction marker, or keeps everything without one", () => {
    const first = message("system", `${COMPACTION_MARKER} one`);
    const second = message("system", `${COMPACTION_MARKER} two`);
    const history = [message("user", "a"), first, message("user", "b"), second, message("user", "c")];
    expect(sinceLastCompaction(history)).toEqual([second, message("user", "c")]);
    expect(sinceLastCompaction([message("user", "a")])).toEqual([message("user", "a")]);
  });

  it("treats only system messages that start with the marker as markers", () => {
    expect(isCompactionMarker(message("user", `${COMPACTION_MARKER} x`))).toBe(false);
    expect(isCompactionMarker(message("system", "note [compaction]"))).toBe(false);
  });
});

describe("compactionMessage", () => {
  it("is a system message with system provenance that starts with the marker", () => {
    expect(compactionMessage("  the summary\n", "r1")).toEqual({
      role: "system",
      content: `${COMPACTION_MARKER} the summary`,
      provenance: { kind: "system" },
      runId: "r1",
    });
  });
});
