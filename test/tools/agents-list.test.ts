// agents_list: docs/tools.md, driven through invokeTool on a real gateway core (split from the session
// tools suite by tool). A note in parentheses in a test title gives the reason for a rule where it is not obvious.
import { describe, expect, it } from "vitest";
import { SESSION_TOOLS } from "../../src/tools/tool-registry.js";
import { type ToolHarness, type ToolHarnessOptions, useToolHarnesses } from "../support/tool-harness.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const start = async (options: ToolHarnessOptions = {}) => (h = await harness(options));

describe("agents_list", () => {
  it("lists only the requester with no agents.list", async () => {
    await start();
    expect(await h.invoke("agents_list", {}, h.caller("agent:main:main"))).toEqual({
      requester: "main",
      agents: [
        {
          id: "main",
          name: "main",
          model: "offline/echo",
          self: true,
          tools: [...SESSION_TOOLS.map((t) => t.name), "read", "write", "append", "edit", "list"],
        },
      ],
    });
  });

  it("lists the allowed agents with their names", async () => {
    await start({
      config: {
        agents: {
          list: [
            { id: "main", name: "Main", subagents: { allowAgents: ["research"] } },
            { id: "research", name: "Research", model: "openai/gpt-4o-mini" },
            { id: "coder" },
          ],
        },
      },
    });
    expect(await h.invoke("agents_list", {}, h.caller("agent:main:main"))).toEqual({
      requester: "main",
      agents: [
        {
          id: "main",
          name: "Main",
          model: "offline/echo",
          self: true,
          tools: expect.arrayContaining(["sessions_list", "read"]),
        },
        {
          id: "research",
          name: "Research",
          model: "openai/gpt-4o-mini",
          self: false,
          tools: expect.arrayContaining(["sessions_list", "read"]),
        },
      ],
    });
  });

  it("lists the requester first, then the other agents sorted by id, with allowAgents [*]", async () => {
    await start({
      config: {
        agents: { list: [{ id: "research" }, { id: "main", subagents: { allowAgents: ["*"] } }, { id: "coder" }] },
      },
    });
    const result = await h.invoke("agents_list", {}, h.caller("agent:main:main"));
    expect(result.agents.map((a: { id: string }) => a.id)).toEqual(["main", "coder", "research"]);
  });

  it("answers for the caller's own agent, which has its own allow list", async () => {
    await start({
      config: { agents: { list: [{ id: "main", subagents: { allowAgents: ["*"] } }, { id: "research" }] } },
    });
    expect(await h.invoke("agents_list", {}, h.caller("agent:research:main"))).toEqual({
      requester: "research",
      agents: [expect.objectContaining({ id: "research", self: true })],
    });
  });
});
