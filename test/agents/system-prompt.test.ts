import { describe, expect, it } from "vitest";
import { buildPromptParts, buildSystemPrompt } from "../../src/agents/system-prompt.js";
import { TRUNCATION_MARKER, capFile } from "../../src/agents/workspace/prompt-files.js";
import { parseConfig } from "../../src/config/index.js";

const { config } = parseConfig({ agents: { list: [{ id: "main", name: "Ada" }] } });
const base = { config, agentId: "main", sessionKey: "agent:main:telegram:group:-100", modelRef: "openai/gpt-4o" };

describe("capFile", () => {
  it("keeps a file within the cap as it is", () => {
    expect(capFile("USER.md", "short", 10)).toEqual({
      name: "USER.md",
      text: "short",
      originalChars: 5,
      truncated: false,
    });
  });

  it("cuts a longer file at the cap and marks the cut with both sizes", () => {
    const file = capFile("MEMORY.md", "x".repeat(250), 100);
    expect(file).toEqual({
      name: "MEMORY.md",
      text: `${"x".repeat(100)}\n${TRUNCATION_MARKER(100, 250)}`,
      originalChars: 250,
      truncated: true,
    });
    expect(file.text).toContain("100 of 250 characters shown");
  });
});

describe("buildPromptParts", () => {
  it("orders identity, session facts, workspace files, tool notes and extra text", () => {
    const parts = buildPromptParts({
      ...base,
      facts: { channel: "telegram", chatType: "group", speaker: "Bea" },
      files: [capFile("AGENTS.md", "Be kind.", 100), capFile("USER.md", "Owner: Ann", 100)],
      toolNames: ["read", "write", "dice__roll"],
      extra: "You were spawned by a parent.",
    });
    expect(parts.map((p) => [p.kind, p.title])).toEqual([
      ["identity", "Identity"],
      ["session", "Session"],
      ["file", "AGENTS.md"],
      ["file", "USER.md"],
      ["tools", "Tool notes"],
      ["extra", "Extra"],
    ]);
    expect(parts[0]!.text).toContain("You are Ada, an assistant reached through Switchboard.");
    expect(parts[1]!.text).toBe(
      "Session: agent:main:telegram:group:-100.\nChannel: telegram, a group.\nSpeaking now: Bea.",
    );
    expect(parts[2]!.text).toBe("## AGENTS.md\nBe kind.");
    expect(parts[4]!.text).toContain("Tools: read, write, dice__roll.");
    expect(parts[4]!.text).toContain("File tools work inside your workspace only");
    expect(parts[4]!.text).toContain("come from MCP servers");
  });

  it("names no speaker in a direct chat and leaves out tool notes without tools", () => {
    const parts = buildPromptParts({ ...base, facts: { channel: "telegram", chatType: "direct", speaker: "Ann" } });
    expect(parts.map((p) => p.kind)).toEqual(["identity", "session"]);
    expect(parts[1]!.text).not.toContain("Speaking now");
  });

  it("says in the file part whether the file was cut", () => {
    const [file] = buildPromptParts({ ...base, files: [capFile("MEMORY.md", "y".repeat(500), 100)] }).filter(
      (p) => p.kind === "file",
    );
    expect(file!.file).toEqual({ name: "MEMORY.md", originalChars: 500, truncated: true });
    expect(file!.text).toContain(TRUNCATION_MARKER(100, 500));
  });

  it("joins the parts with blank lines into the system prompt", () => {
    const input = { ...base, files: [capFile("USER.md", "Owner: Ann", 100)] };
    expect(buildSystemPrompt(input)).toBe(
      buildPromptParts(input)
        .map((p) => p.text)
        .join("\n\n"),
    );
  });
});
