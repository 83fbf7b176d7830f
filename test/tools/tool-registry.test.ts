// The tool registry (toolsFor, aiToolsFor, invokeTool): docs/tools.md, driven through invokeTool on a real gateway core (split from the session
// tools suite by tool). A note in parentheses in a test title gives the reason for a rule where it is not obvious.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { SESSION_TOOLS, aiToolsFor, findTool, toolsFor } from "../../src/tools/tool-registry.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type ToolHarness, type ToolHarnessOptions, useToolHarnesses } from "../support/tool-harness.js";
import { user } from "../support/session-tool-fixtures.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const start = async (options: ToolHarnessOptions = {}) => (h = await harness(options));

describe("toolsFor", () => {
  const names = (tools: Array<{ name: string }>) => tools.map((t) => t.name);

  it("gives every other session all session tools", async () => {
    await start({ config: { tools: { subagents: { tools: { deny: ["agents_list"] } } } } });
    expect(names(toolsFor(h.deps, h.caller("agent:main:telegram:dm:42")))).toEqual([
      "sessions_list",
      "sessions_history",
      "sessions_send",
      "sessions_spawn",
      "agents_list",
    ]);
  });

  it.each([
    ["by default", {}],
    [
      "with tools.subagents.tools.allow naming them (built-in denials cannot be lifted)",
      { allow: ["sessions_list", "sessions_send", "agents_list"] },
    ],
    [
      "with an allow list of other tools (toolsFor is the session tools only, file and MCP tools come from agentTools)",
      { allow: ["read"] },
    ],
    ["with a deny list", { deny: ["exec"] }],
  ])("gives a sub-agent no session tools %s", async (_name, subagentTools) => {
    await start({ config: { tools: { subagents: { tools: subagentTools } } } });
    const caller = h.caller("agent:main:subagent:abc");
    expect(toolsFor(h.deps, caller)).toEqual([]);
    expect(aiToolsFor(h.deps, caller)).toEqual({});
  });
});

describe("aiToolsFor", () => {
  it("offers each session tool with a JSON schema free of anyOf, oneOf and allOf", async () => {
    await start();
    const set = aiToolsFor(h.deps, h.caller("agent:main:main"));
    expect(Object.keys(set)).toEqual(SESSION_TOOLS.map((t) => t.name));
    for (const definition of SESSION_TOOLS) {
      const schema = JSON.stringify(z.toJSONSchema(definition.input, { io: "input" }));
      expect(schema, definition.name).not.toMatch(/"(anyOf|oneOf|allOf)"/);
    }
  });

  it("types the numeric parameters as numbers", () => {
    const property = (tool: string, name: string) =>
      (z.toJSONSchema(findTool(tool)!.input, { io: "input" }) as { properties: Record<string, { type?: string }> })
        .properties[name];
    for (const [tool, name] of [
      ["sessions_history", "limit"],
      ["sessions_list", "limit"],
      ["sessions_list", "activeMinutes"],
      ["sessions_list", "messageLimit"],
      ["sessions_send", "timeoutSeconds"],
      ["sessions_spawn", "runTimeoutSeconds"],
    ] as const) {
      expect(property(tool, name), `${tool}.${name}`).toMatchObject({ type: "number" });
    }
  });
});

describe("invokeTool", () => {
  it.each([
    ["sessions_list", { limit: "5" }, "limit"],
    ["sessions_list", { activeMinutes: 0 }, "activeMinutes"],
    ["sessions_list", { kinds: [1] }, "kinds[0]"],
    ["sessions_list", { extra: true }, "(root)"],
    ["sessions_history", {}, "sessionKey"],
    ["sessions_history", { sessionKey: "main", limit: 0 }, "limit"],
    ["sessions_history", { sessionKey: "main", includeTools: "yes" }, "includeTools"],
    ["sessions_send", { sessionKey: 42, message: "hi" }, "sessionKey"],
    ["sessions_spawn", { task: "x", runTimeoutSeconds: -1 }, "runTimeoutSeconds"],
    ["sessions_spawn", { task: "x", label: "l".repeat(65) }, "label"],
    ["agents_list", { agentId: "main" }, "(root)"],
  ])("turns invalid arguments for %s (%j) into {status: error} naming the path %s", async (tool, args, at) => {
    await start({ model: createScriptedModel([]) });
    await h.seed({ key: "agent:main:main" });
    const result = await h.invoke(tool, args, h.owner());
    expect(result).toEqual({
      status: "error",
      error: expect.stringMatching(
        new RegExp(`^invalid arguments for ${tool}: ${at.replace(/[()[\]]/g, "\\$&")}: \\S`),
      ),
    });
  });

  it("turns a typed INVALID_ARGUMENT failure into {status: error} with its message", async () => {
    await start();
    await h.seed({ key: "agent:main:main", messages: [user("hi")] });
    expect(await h.invoke("sessions_history", { sessionKey: "main", cursor: "not a cursor" }, h.owner())).toEqual({
      status: "error",
      error: expect.stringMatching(/^Invalid history cursor "not a cursor": /),
    });
  });

  it("turns an unexpected failure into {status: error} naming the tool, and logs it", async () => {
    await start();
    const { entry } = await h.seed({ key: "agent:main:main" });
    await mkdir(path.join(h.home, "agents", "main", "sessions", `${entry.sessionId}.jsonl`), { recursive: true });
    const result = (await h.invoke("sessions_history", { sessionKey: "main" }, h.owner())) as { error: string };
    expect(result).toEqual({
      status: "error",
      error: expect.stringMatching(/^sessions_history failed: internal error \(error id [0-9a-f]{8}\)/),
    });
    expect(result.error).not.toContain("EISDIR");
    const errorId = /error id ([0-9a-f]{8})/.exec(result.error)![1];
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: "tool failed",
        fields: expect.objectContaining({
          tool: "sessions_history",
          errorId,
          err: expect.objectContaining({ code: "EISDIR", stack: expect.any(String) }),
        }),
      }),
    );
  });

  it("treats missing arguments as {}", async () => {
    await start();
    expect(await h.invoke("agents_list", undefined, h.owner())).toMatchObject({ requester: "main" });
  });

  it("reports every problem, separated by '; '", async () => {
    await start();
    const result = await h.invoke("sessions_send", { sessionKey: "", message: 1 }, h.owner());
    expect(result.error).toMatch(/^invalid arguments for sessions_send: sessionKey: .+; message: .+/);
  });
});
