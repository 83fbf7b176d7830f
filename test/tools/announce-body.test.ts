import { describe, expect, it } from "vitest";
import {
  announceBody,
  announceStatsLine,
  formatRuntime,
  parseAnnounceSections,
  statsLine,
} from "../../src/tools/announce-body.js";

describe("parseAnnounceSections", () => {
  it.each([
    [
      "a bold label with the colon inside (no stray '** ')",
      "- **Result:** did some stuff\n- **Notes:** all good",
      { result: "did some stuff", notes: "all good" },
    ],
    [
      "a bold label with the colon outside",
      "**Result**: did some stuff\n**Notes**: all good",
      { result: "did some stuff", notes: "all good" },
    ],
    ["plain labels", "Result: did some stuff\nNotes: all good", { result: "did some stuff", notes: "all good" }],
    [
      "star bullets and lower case",
      "* result: did some stuff\n*   notes: all good",
      { result: "did some stuff", notes: "all good" },
    ],
    ["only a Result", "Result: 42", { result: "42" }],
    ["no heading at all", "just some text", {}],
  ])("reads %s", (_name, reply, expected) => {
    expect(parseAnnounceSections(reply)).toEqual(expected);
  });

  it("collects the lines after a heading into that section, trimmed at both ends", () => {
    const reply = "Result:\nline one\n  line two\n\nNotes: first note\n- second note\n";
    expect(parseAnnounceSections(reply)).toEqual({
      result: "line one\n  line two",
      notes: "first note\n- second note",
    });
  });

  it("drops text before the first heading", () => {
    expect(parseAnnounceSections("Sure, here you go.\n\nResult: done\nNotes: none")).toEqual({
      result: "done",
      notes: "none",
    });
  });

  it("reads a model-written Status as a section of its own, never as part of Result", () => {
    expect(
      parseAnnounceSections("- **Status:** success\n\n- **Result:** did some stuff\n\n- **Notes:** all good"),
    ).toEqual({ result: "did some stuff", notes: "all good" });
  });

  it("does not take words that only start like a label (Results:, Notes-to-self:) for headings", () => {
    expect(parseAnnounceSections("Result: ok\nResults: 5 rows\nNotes-to-self: x")).toEqual({
      result: "ok\nResults: 5 rows\nNotes-to-self: x",
    });
  });
});

describe("formatRuntime", () => {
  it.each([
    [undefined, "n/a"],
    [0, "n/a"],
    [-5, "n/a"],
    [400, "0s"],
    [1_499, "1s"],
    [45_000, "45s"],
    [65_000, "1m5s"],
    [3_600_000, "1h0m"],
    [3_723_000, "1h2m"],
  ])("formats %s ms as %s", (ms, expected) => {
    expect(formatRuntime(ms)).toBe(expected);
  });
});

describe("statsLine", () => {
  it("writes runtime, tokens n/a and the session key when nothing else is known", () => {
    expect(statsLine({ runtimeMs: 10, sessionKey: "agent:main:subagent:test" })).toBe(
      "Stats: runtime 0s • tokens n/a • sessionKey agent:main:subagent:test",
    );
  });

  it("joins every known part with ' • ' in order: runtime, tokens, sessionKey, sessionId, transcript", () => {
    const line = statsLine({
      runtimeMs: 65_000,
      inputTokens: 1_234,
      outputTokens: 56,
      totalTokens: 1_290,
      sessionKey: "agent:main:subagent:x",
      sessionId: "s-1",
      transcriptPath: "/home/sb/agents/main/sessions/s-1.jsonl",
    });
    expect(line).toBe(
      "Stats: runtime 1m5s • tokens 1.3k (in 1.2k / out 56) • sessionKey agent:main:subagent:x • sessionId s-1 • transcript /home/sb/agents/main/sessions/s-1.jsonl",
    );
  });

  it.each([
    ["in and out without a total", { inputTokens: 1_200, outputTokens: 300 }, "tokens 1.5k (in 1.2k / out 300)"],
    ["only in", { inputTokens: 1_200 }, "tokens 1.2k (in 1.2k / out n/a)"],
    ["zero", { inputTokens: 0, outputTokens: 0 }, "tokens 0 (in 0 / out 0)"],
    [
      "millions",
      { totalTokens: 2_500_000, inputTokens: 2_000_000, outputTokens: 500_000 },
      "tokens 2.5m (in 2.0m / out 500.0k)",
    ],
    ["no counts", {}, "tokens n/a"],
  ])("formats token counts: %s", (_name, tokens, expected) => {
    expect(statsLine({ ...tokens, sessionKey: "k" })).toContain(` • ${expected} • `);
  });
});

describe("announceStatsLine", () => {
  const stats = {
    runtimeMs: 5_000,
    inputTokens: 10,
    outputTokens: 5,
    sessionKey: "agent:main:subagent:x",
    sessionId: "s-1",
    transcriptPath: "/srv/sb/agents/main/sessions/s-1.jsonl",
  };

  it("names the transcript by its file for chat platforms and by its full path for local clients", () => {
    expect(announceStatsLine(stats, { mode: "full", localClient: false })).toBe(
      "Stats: runtime 5s • tokens 15 (in 10 / out 5) • sessionKey agent:main:subagent:x • sessionId s-1 • transcript s-1.jsonl",
    );
    expect(announceStatsLine(stats, { mode: "full", localClient: true })).toContain(
      "transcript /srv/sb/agents/main/sessions/s-1.jsonl",
    );
  });

  it("writes runtime and tokens only when brief, and nothing when off", () => {
    expect(announceStatsLine(stats, { mode: "brief", localClient: true })).toBe(
      "Stats: runtime 5s • tokens 15 (in 10 / out 5)",
    );
    expect(announceStatsLine(stats, { mode: "off", localClient: false })).toBe("");
    expect(announceBody({ outcome: "success", reply: "Result: ok", stats: "" })).toBe(
      "Status: success\n\nResult:\nok\n\nNotes:\n- (none)",
    );
  });
});

describe("announceBody", () => {
  const stats = "Stats: runtime 0s • tokens n/a • sessionKey agent:main:subagent:test";

  it("writes Status from the outcome, the reply as Result and the error as a Note", () => {
    expect(announceBody({ outcome: "error", error: "boom", reply: "did some stuff", stats })).toBe(
      `Status: error\n\nResult:\ndid some stuff\n\nNotes:\n- Error: boom\n\n${stats}`,
    );
  });

  it("ignores a model-written Status and keeps the runtime's (clean Result and Notes)", () => {
    const body = announceBody({
      outcome: "error",
      error: "boom",
      reply: "- **Status:** success\n\n- **Result:** did some stuff\n\n- **Notes:** all good",
      stats,
    });
    expect(body).toBe(`Status: error\n\nResult:\ndid some stuff\n\nNotes:\nall good\n- Error: boom\n\n${stats}`);
    expect(body).not.toContain("success");
  });

  it.each(["success", "timeout", "stopped"] as const)("writes Status: %s from the outcome", (outcome) => {
    expect(announceBody({ outcome, reply: "Result: x", stats })).toMatch(new RegExp(`^Status: ${outcome}\\n`));
  });

  it("writes - (none) when there are neither notes nor an error", () => {
    expect(announceBody({ outcome: "success", reply: "Result: found it", stats })).toBe(
      `Status: success\n\nResult:\nfound it\n\nNotes:\n- (none)\n\n${stats}`,
    );
  });

  it("writes (not available) for a blank reply", () => {
    expect(announceBody({ outcome: "timeout", reply: "  \n", stats })).toContain(
      "Result:\n(not available)\n\nNotes:\n- (none)",
    );
  });

  it("puts the label in a title line above Status", () => {
    expect(announceBody({ outcome: "success", reply: "Result: ok", stats, label: "nightly" })).toMatch(
      /^Sub-agent "nightly"\n\nStatus: success\n/,
    );
  });
});
