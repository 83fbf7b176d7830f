import { describe, expect, it } from "vitest";
import { buildPromptParts } from "../../../src/agents/system-prompt.js";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { COMPACTION_MARKER } from "../../../src/agents/compaction-marker.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";

describe("contextCommand", () => {
  it("answers /context with its help", async () => {
    const h = await createCommandHarness();
    expect(await h.dispatch(dm("42", "/context"))).toEqual({ reply: STRINGS.contextHelp });
  });

  it("reports the system prompt parts, the tools and the history since the last compaction (chat commands left out) as JSON", async () => {
    const h = await createCommandHarness();
    await h.seed(KEY, {}, [
      { role: "user", content: "old" },
      { role: "system", content: `${COMPACTION_MARKER} what happened before` },
      { role: "user", content: "hello" },
      { role: "user", content: "/status", command: true },
      { role: "assistant", content: "Session: a long status reply the model never sees", command: true },
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
    ]);
    const report = JSON.parse((await h.dispatch(dm("42", "/context json")))!.reply!);
    const parts = buildPromptParts({
      config: h.config,
      agentId: "main",
      sessionKey: KEY,
      modelRef: "offline/echo",
      facts: { channel: "telegram", chatType: "direct", speaker: "42" },
      toolNames: ["sessions_list"],
    });
    const summary = Math.ceil(`${COMPACTION_MARKER} what happened before`.length / 4);
    const system = parts.reduce((sum, p) => sum + Math.ceil(p.text.length / 4), 0);
    expect(report).toEqual({
      sessionKey: KEY,
      model: "offline/echo",
      window: 32_000,
      systemPrompt: {
        parts: parts.map((p) => ({ kind: p.kind, title: p.title, text: p.text, tokens: Math.ceil(p.text.length / 4) })),
        tokens: system,
      },
      summary: { tokens: summary },
      tools: [{ name: "sessions_list", description: "List the sessions you can see." }],
      history: { messages: 2, tokens: 3, byRole: { user: 1, assistant: 1 } },
      totalTokens: system + summary + 3,
    });
  });

  it("lists the sizes, and with detail every prompt line and tool description", async () => {
    const h = await createCommandHarness();
    const list = (await h.dispatch(dm("42", "/context list")))!.reply!;
    expect(list.split("\n")).toEqual([
      `${STRINGS.contextTitle(false)} for ${KEY} (model offline/echo)`,
      expect.stringMatching(/^System prompt: 3 parts, ~\d+ tokens$/),
      expect.stringMatching(/^ {2}- Identity: ~\d+$/),
      expect.stringMatching(/^ {2}- Session: ~\d+$/),
      expect.stringMatching(/^ {2}- Tool notes: ~\d+$/),
      "History: 0 messages, ~0 tokens",
      expect.stringMatching(/^Total: ~\d+ of 32k tokens · biggest: Identity ~\d+, /),
      "Tools (1): sessions_list",
    ]);
    const detail = (await h.dispatch(dm("42", "/context detail")))!.reply!;
    expect(detail).toContain("      Answer the person directly and briefly.");
    expect(detail).toContain("  - sessions_list: List the sessions you can see.");
  });
});
