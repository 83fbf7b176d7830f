// sessions_list as docs/tools.md describes it, driven through invokeTool on a real gateway core (split from the
// session tools suite by tool). A note in parentheses in a test title gives the reason for a rule where it is not obvious.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type ToolHarness, type ToolHarnessOptions, useToolHarnesses } from "../support/tool-harness.js";
import { assistant, keysOf, toolCall, toolResult, user } from "../support/session-tool-fixtures.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const start = async (options: ToolHarnessOptions = {}) => (h = await harness(options));

describe("sessions_list", () => {
  it("lists the caller's own main as main, with kind and channel from the parsed key (canonical keys)", async () => {
    await start();
    await h.seed({ key: "agent:main:main", entry: { updatedAt: 10, lastChannel: "whatsapp" } });
    await h.seed({ key: "agent:main:discord:group:dev", entry: { updatedAt: 11, displayName: "discord:g-dev" } });
    await h.seed({ key: "agent:main:cron:job-1", entry: { updatedAt: 9 } });
    const result = await h.invoke("sessions_list", {}, h.caller("agent:main:main"));
    expect(result.count).toBe(3);
    expect(result.sessions).toEqual([
      expect.objectContaining({
        key: "agent:main:discord:group:dev",
        kind: "group",
        channel: "discord",
        displayName: "discord:g-dev",
        updatedAt: 11,
      }),
      expect.objectContaining({
        key: "main",
        kind: "main",
        channel: "whatsapp",
        updatedAt: 10,
        lastChannel: "whatsapp",
      }),
      expect.objectContaining({ key: "agent:main:cron:job-1", kind: "cron", channel: "internal", updatedAt: 9 }),
    ]);
  });

  it("finds agent:main:cron:job-1 with kinds [cron]", async () => {
    await start();
    await h.seed({ key: "agent:main:main" });
    const cron = await h.seed({ key: "agent:main:cron:job-1" });
    const result = await h.invoke("sessions_list", { kinds: ["cron"] }, h.owner());
    expect(result).toEqual({
      count: 1,
      sessions: [
        expect.objectContaining({
          key: "agent:main:cron:job-1",
          kind: "cron",
          channel: "internal",
          sessionId: cron.entry.sessionId,
        }),
      ],
    });
    expect(result.sessions[0]).not.toHaveProperty("messages");
  });

  it.each([
    ["agent:main:cron:job-1", "cron"],
    ["agent:main:hook:abc", "hook"],
    ["agent:main:node-n1", "node"],
    ["agent:main:subagent:abc", "subagent"],
  ])("reports %s as kind %s on channel internal, whatever channel its entry names", async (key, kind) => {
    await start();
    await h.seed({ key, entry: { channel: "telegram", lastChannel: "telegram", lastTo: "42" } });
    expect((await h.invoke("sessions_list", {}, h.owner())).sessions).toEqual([
      expect.objectContaining({ kind, channel: "internal" }),
    ]);
  });

  it.each([
    ["a DM key names the channel", "agent:main:telegram:dm:42", {}, "dm", "telegram"],
    ["a channel key is a group", "agent:main:discord:channel:123", {}, "group", "discord"],
    ["the entry's channel", "agent:main:main", { channel: "webchat" }, "main", "webchat"],
    ["the last route", "agent:main:main", { deliveryContext: { channel: "telegram", to: "42" } }, "main", "telegram"],
    ["nothing known", "agent:main:main", {}, "main", "unknown"],
    ["an unreadable rest", "agent:main:some:thing", {}, "other", "unknown"],
  ])("derives kind and channel: %s", async (_name, key, entry, kind, channel) => {
    await start();
    await h.seed({ key, entry });
    expect((await h.invoke("sessions_list", {}, h.owner())).sessions).toEqual([
      expect.objectContaining({ kind, channel }),
    ]);
  });

  it("never lists global or unknown", async () => {
    await start();
    await h.seed({ key: "global" });
    await h.seed({ key: "unknown" });
    await h.seed({ key: "agent:main:main" });
    expect(keysOf(await h.invoke("sessions_list", {}, h.owner()))).toEqual(["main"]);
  });

  it("lists the caller's own session as main under session.scope global", async () => {
    await start({ config: { session: { scope: "global" } } });
    await h.seed({ key: "global" });
    expect(keysOf(await h.invoke("sessions_list", {}, h.caller("global")))).toEqual(["main"]);
  });

  // BUG (open): canSee returns true for any `global` under scope global, before the agent-to-agent
  // and sandbox checks, and displayKeyOf shows every agent's `global` as main.
  it("lists only the caller's own agent's global session under session.scope global while agent-to-agent is disabled", async () => {
    await start({ config: { session: { scope: "global" }, agents: { list: [{ id: "main" }, { id: "ops" }] } } });
    await h.seed({ key: "global", agentId: "main", entry: { sessionId: "main-global" } });
    await h.seed({ key: "global", agentId: "ops", entry: { sessionId: "ops-global" } });
    const result = await h.invoke("sessions_list", {}, h.caller("global"));
    expect(result.sessions.map((s: { key: string; sessionId: string }) => [s.key, s.sessionId])).toEqual([
      ["main", "main-global"],
    ]);
  });

  it("returns 50 rows by default, newest first", async () => {
    await start();
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        h.seed({ key: `agent:main:telegram:dm:${i}`, entry: { updatedAt: 1_000 + i } }),
      ),
    );
    const result = await h.invoke("sessions_list", {}, h.owner());
    expect(result.count).toBe(50);
    expect(result.sessions[0].key).toBe("agent:main:telegram:dm:59");
    expect(result.sessions[49].key).toBe("agent:main:telegram:dm:10");
  });

  it.each([
    [500, 200],
    [7, 7],
  ])("clamps limit %s to %s rows", async (limit, rows) => {
    await start();
    await Promise.all(Array.from({ length: 210 }, (_, i) => h.seed({ key: `agent:main:telegram:dm:${i}` })));
    expect((await h.invoke("sessions_list", { limit }, h.owner())).count).toBe(rows);
  });

  it.each([0, -5, 1.5, 1e308, Number.NaN])(
    "rejects limit %s as an argument error: limits are whole numbers >= 1",
    async (limit) => {
      await start();
      expect(await h.invoke("sessions_list", { limit }, h.owner())).toEqual({
        status: "error",
        error: expect.stringMatching(/^invalid arguments for sessions_list: limit: /),
      });
      expect(await h.invoke("sessions_history", { sessionKey: "main", limit }, h.owner())).toEqual({
        status: "error",
        error: expect.stringMatching(/^invalid arguments for sessions_history: limit: /),
      });
    },
  );

  it('accepts a bare string for kinds ("cron" = ["cron"])', async () => {
    await start();
    await h.seed({ key: "agent:main:cron:nightly" });
    await h.seed({ key: "agent:main:telegram:dm:1" });
    expect(keysOf(await h.invoke("sessions_list", { kinds: "cron" }, h.owner()))).toEqual(["agent:main:cron:nightly"]);
    expect(await h.invoke("sessions_list", { kinds: "bogus" }, h.owner())).toMatchObject({ status: "error" });
  });

  it("filters on kinds before it applies the limit", async () => {
    await start();
    await h.seed({ key: "agent:main:cron:nightly", entry: { updatedAt: 1 } });
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        h.seed({ key: `agent:main:telegram:dm:${i}`, entry: { updatedAt: 100 + i } }),
      ),
    );
    expect(keysOf(await h.invoke("sessions_list", { kinds: ["cron"], limit: 1 }, h.owner()))).toEqual([
      "agent:main:cron:nightly",
    ]);
  });

  it("keeps only sessions with a turn in the last activeMinutes", async () => {
    await start();
    const now = h.core.now();
    await h.seed({ key: "agent:main:telegram:dm:fresh", entry: { updatedAt: now - 60_000 } });
    await h.seed({ key: "agent:main:telegram:dm:stale", entry: { updatedAt: now - 10 * 60_000 } });
    expect(keysOf(await h.invoke("sessions_list", { activeMinutes: 5 }, h.owner()))).toEqual([
      "agent:main:telegram:dm:fresh",
    ]);
  });

  it("rejects unknown kinds as a structured error", async () => {
    await start();
    const result = await h.invoke("sessions_list", { kinds: ["cron", "bogus"] }, h.owner());
    expect(result).toEqual({
      status: "error",
      error: expect.stringMatching(/^invalid arguments for sessions_list: kinds\[1\]: .*"cron"/),
    });
  });

  it("drops other agents' sessions silently while agent-to-agent is disabled", async () => {
    await start({ config: { agents: { list: [{ id: "main" }, { id: "other" }] } } });
    await h.seed({ key: "agent:main:main" });
    await h.seed({ key: "agent:other:main" });
    expect(await h.invoke("sessions_list", {}, h.caller("agent:main:main"))).toEqual({
      count: 1,
      sessions: [expect.objectContaining({ key: "main", kind: "main", channel: "unknown" })],
    });
  });

  it("lists other agents' sessions, canonically, once agent-to-agent allows them", async () => {
    await start({
      config: { agents: { list: [{ id: "main" }, { id: "other" }] }, tools: { agentToAgent: { enabled: true } } },
    });
    await h.seed({ key: "agent:main:main", entry: { updatedAt: 2 } });
    await h.seed({ key: "agent:other:main", entry: { updatedAt: 1 } });
    expect(keysOf(await h.invoke("sessions_list", {}, h.caller("agent:main:main")))).toEqual([
      "main",
      "agent:other:main",
    ]);
  });

  it("shows a sandboxed session only itself and the sessions it spawned (a sandbox sees only its own tree)", async () => {
    await start({ config: { agents: { defaults: { sandbox: { mode: "non-main" } } } } });
    await h.seed({ key: "agent:main:main" });
    await h.seed({ key: "agent:main:telegram:dm:42", entry: { updatedAt: 3 } });
    await h.seed({ key: "agent:main:subagent:mine", entry: { updatedAt: 2, spawnedBy: "agent:main:telegram:dm:42" } });
    await h.seed({ key: "agent:main:subagent:theirs", entry: { updatedAt: 1, spawnedBy: "agent:main:main" } });
    expect(keysOf(await h.invoke("sessions_list", {}, h.caller("agent:main:telegram:dm:42")))).toEqual([
      "agent:main:telegram:dm:42",
      "agent:main:subagent:mine",
    ]);
    expect(await h.invoke("sessions_list", {}, h.caller("agent:main:main"))).toMatchObject({ count: 4 });
  });

  it("reports transcriptPath as the real transcript file", async () => {
    await start();
    const { entry } = await h.seed({ key: "agent:main:main", messages: [user("hi")] });
    const [row] = (await h.invoke("sessions_list", {}, h.owner())).sessions;
    expect(row.transcriptPath).toBe(path.join(h.home, "agents", "main", "sessions", `${entry.sessionId}.jsonl`));
    expect(existsSync(row.transcriptPath)).toBe(true);
  });

  it("reports a topic session's own transcript file (sessionFile, changed: W3)", async () => {
    await start();
    const { entry } = await h.seed({
      key: "agent:main:telegram:group:-100:topic:7",
      entry: { sessionId: "s-topic", sessionFile: "s-topic-topic-7.jsonl" },
      messages: [user("hi")],
    });
    const [row] = (await h.invoke("sessions_list", {}, h.owner())).sessions;
    expect(row.transcriptPath).toBe(path.join(h.home, "agents", "main", "sessions", entry.sessionFile!));
    expect(existsSync(row.transcriptPath)).toBe(true);
  });

  it("returns each session's last messageLimit messages without tool calls or results", async () => {
    await start();
    await h.seed({
      key: "agent:main:main",
      messages: [user("q1"), assistant("a1"), user("q2"), toolCall("c1"), toolResult("c1"), assistant("a2")],
    });
    const [row] = (await h.invoke("sessions_list", { messageLimit: 2 }, h.owner())).sessions;
    expect(row.messages.map((m: { role: string; content: unknown }) => [m.role, m.content])).toEqual([
      ["user", "q2"],
      ["assistant", [{ type: "text", text: "a2" }]],
    ]);
  });

  it("caps messageLimit at 20", async () => {
    await start();
    await h.seed({ key: "agent:main:main" });
    await h.appendMany("agent:main:main", 30);
    const [row] = (await h.invoke("sessions_list", { messageLimit: 50 }, h.owner())).sessions;
    expect(row.messages).toHaveLength(20);
    expect(row.messages[19].content).toBe("m29");
  });
});
