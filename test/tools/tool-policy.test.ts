import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { matchesTool, policyAllows, toolPermitted } from "../../src/tools/tool-policy.js";

const SESSION = new Set(["sessions_list", "sessions_send", "sessions_spawn", "sessions_history", "agents_list"]);

describe("matchesTool", () => {
  it.each([
    ["read", "read", true],
    ["READ", "read", true],
    ["github__*", "github__create_issue", true],
    ["github__*", "gitlab__x", false],
    ["*", "anything", true],
    ["read", "reader", false],
  ])("%s against %s is %s", (pattern, tool, expected) => {
    expect(matchesTool(pattern, tool)).toBe(expected);
  });
});

describe("policyAllows", () => {
  it("lets deny win over allow", () => {
    expect(policyAllows({ allow: ["dice__*"], deny: ["dice__roll"] }, "dice__roll")).toBe(false);
    expect(policyAllows({ allow: ["dice__*"], deny: [] }, "dice__flip")).toBe(true);
    expect(policyAllows({ deny: [] }, "anything")).toBe(true);
  });
});

describe("toolPermitted", () => {
  const config = (input: Record<string, unknown>) => parseConfig(input).config;

  it("gives a sub-agent every tool but the session tools by default", () => {
    const c = config({});
    const sub = { agentId: "main", subagent: {} };
    expect(
      ["read", "dice__roll", "sessions_list", "agents_list"].filter((t) => toolPermitted(c, sub, t, SESSION)),
    ).toEqual(["read", "dice__roll"]);
  });

  it("gives a sub-agent exactly tools.subagents.tools.allow, never a session tool", () => {
    const c = config({ tools: { subagents: { tools: { allow: ["read", "sessions_send"] } } } });
    const sub = { agentId: "main", subagent: {} };
    expect(["read", "write", "sessions_send"].filter((t) => toolPermitted(c, sub, t, SESSION))).toEqual(["read"]);
  });

  it("never gives a child a tool its parent's agent may not use", () => {
    const c = config({
      agents: {
        list: [{ id: "main", tools: { deny: ["write"] }, subagents: { allowAgents: ["wide"] } }, { id: "wide" }],
      },
    });
    const child = { agentId: "wide", subagent: { parentAgentId: "main" } };
    expect(toolPermitted(c, { agentId: "wide" }, "write", SESSION)).toBe(true);
    expect(toolPermitted(c, child, "write", SESSION)).toBe(false);
    expect(toolPermitted(c, child, "read", SESSION)).toBe(true);
  });

  it("applies tools.deny to every agent and an agent's own allow list on top", () => {
    const c = config({
      tools: { deny: ["dice__*"] },
      agents: { list: [{ id: "main" }, { id: "ops", tools: { allow: ["read", "dice__roll"] } }] },
    });
    expect(toolPermitted(c, { agentId: "main" }, "dice__roll", SESSION)).toBe(false);
    expect(toolPermitted(c, { agentId: "ops" }, "dice__roll", SESSION)).toBe(false);
    expect(toolPermitted(c, { agentId: "ops" }, "read", SESSION)).toBe(true);
    expect(toolPermitted(c, { agentId: "ops" }, "write", SESSION)).toBe(false);
  });
});
