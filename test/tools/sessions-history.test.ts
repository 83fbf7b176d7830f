// sessions_history: docs/tools.md, driven through invokeTool on a real gateway core (split from the session
// tools suite by tool). A note in parentheses in a test title gives the reason for a rule where it is not obvious.
import { describe, expect, it } from "vitest";
import { type ToolHarness, type ToolHarnessOptions, useToolHarnesses } from "../support/tool-harness.js";
import { assistant, toolCall, toolResult, unknownSession, user } from "../support/session-tool-fixtures.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const start = async (options: ToolHarnessOptions = {}) => (h = await harness(options));

describe("sessions_history", () => {
  it("returns the caller's main by 'main', without tool messages", async () => {
    await start();
    const { entry } = await h.seed({
      key: "agent:main:main",
      messages: [user("hello"), toolCall("c1"), toolResult("c1"), assistant("ok")],
    });
    const result = await h.invoke("sessions_history", { sessionKey: "main" }, h.caller("agent:main:telegram:dm:42"));
    expect(result).toMatchObject({ sessionKey: "main", sessionId: entry.sessionId, hasMore: false });
    expect(result.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  });

  it("includes tool calls and results with includeTools", async () => {
    await start();
    await h.seed({
      key: "agent:main:main",
      messages: [user("hello"), toolCall("c1"), toolResult("c1"), assistant("ok")],
    });
    const result = await h.invoke("sessions_history", { sessionKey: "main", includeTools: true }, h.owner());
    expect(result.messages.map((m: { role: string }) => m.role)).toEqual([
      "user",
      "toolCall",
      "toolResult",
      "assistant",
    ]);
  });

  it("finds a session by its sessionId and reports its canonical key", async () => {
    await start();
    const { entry } = await h.seed({
      key: "agent:main:discord:channel:1457165743010611293",
      entry: { sessionId: "sess-group" },
      messages: [assistant("from the group")],
    });
    const result = await h.invoke("sessions_history", { sessionKey: "sess-group" }, h.owner());
    expect(result).toMatchObject({
      sessionKey: "agent:main:discord:channel:1457165743010611293",
      sessionId: entry.sessionId,
    });
    expect(result.messages).toHaveLength(1);
  });

  it("finds a session by any spelling of its key", async () => {
    await start();
    await h.seed({ key: "agent:main:telegram:group:-100123", messages: [user("x")] });
    const result = await h.invoke("sessions_history", { sessionKey: "Agent:MAIN:telegram:Group:-100123" }, h.owner());
    expect(result.sessionKey).toBe("agent:main:telegram:group:-100123");
  });

  it.each([
    ["an unknown sessionId (the error names the input and the fix)", "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa"],
    ["an unknown key", "agent:main:telegram:dm:404"],
  ])("reports %s as a clear error", async (_name, ref) => {
    await start();
    expect(await h.invoke("sessions_history", { sessionKey: ref }, h.owner())).toEqual({
      status: "error",
      error: unknownSession(ref),
    });
  });

  it("gives another agent's session the unknown-session error while agent-to-agent is disabled (hidden = missing, not forbidden)", async () => {
    await start({ config: { agents: { list: [{ id: "main" }, { id: "other" }] } } });
    await h.seed({ key: "agent:other:main", messages: [user("secret")] });
    expect(await h.invoke("sessions_history", { sessionKey: "agent:other:main" }, h.caller("agent:main:main"))).toEqual(
      { status: "error", error: unknownSession("agent:other:main") },
    );
  });

  it("returns 200 messages by default, the newest ones", async () => {
    await start();
    await h.seed({ key: "agent:main:main" });
    await h.appendMany("agent:main:main", 300);
    const result = await h.invoke("sessions_history", { sessionKey: "main" }, h.owner());
    expect(result.messages).toHaveLength(200);
    expect(result.messages[0].content).toBe("m100");
    expect(result.hasMore).toBe(true);
  });

  it("clamps limit to 1000", async () => {
    await start();
    await h.seed({ key: "agent:main:main" });
    await h.appendMany("agent:main:main", 1_005);
    const result = await h.invoke("sessions_history", { sessionKey: "main", limit: 5_000 }, h.owner());
    expect(result.messages).toHaveLength(1_000);
    expect(result.messages[0].content).toBe("m5");
    expect(result.messages[999].content).toBe("m1004");
  });

  it("pages back with the cursor it returns", async () => {
    await start();
    await h.seed({ key: "agent:main:main" });
    await h.appendMany("agent:main:main", 5);
    const first = await h.invoke("sessions_history", { sessionKey: "main", limit: 3 }, h.owner());
    const second = await h.invoke(
      "sessions_history",
      { sessionKey: "main", limit: 3, cursor: first.cursor },
      h.owner(),
    );
    expect(first.messages.map((m: { content: string }) => m.content)).toEqual(["m2", "m3", "m4"]);
    expect(second).toMatchObject({ hasMore: false, messages: [{ content: "m0" }, { content: "m1" }] });
  });
});
