import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMPACTION_MARKER } from "../../../src/agents/compaction-marker.js";
import { COMPACTION_STRINGS } from "../../../src/agents/compaction/compaction-strings.js";
import { createFakeChannelAdapter } from "../../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../../fakes/scripted-model.js";
import { type TestGateway, tempHome, useTestGateways } from "../../support/test-gateway.js";
import { telegramDm } from "../../support/telegram-dm.js";

const start = useTestGateways();
const NOW = Date.UTC(2026, 0, 31, 12);
const KEY = "agent:main:main"; // one owner DMs the bot: the shared main session (dmScope "main")
const LONG = `Remember this: ${"my birthday is on May 3 and I like green tea. ".repeat(20)}`;
let seq = 0;
const dm = (text: string) => telegramDm(text, { messageId: `c${++seq}` });

async function send(gw: TestGateway, text: string) {
  const result = await gw.gateway.core.pipeline.handleInbound(dm(text));
  if (result.status === "queued") await result.done;
  return result;
}

// A 300-token window compacted at half: about 600 characters of context.
const small = (model = "test/small", extra: Record<string, unknown> = {}) => ({
  channels: { telegram: { owners: ["42"] } },
  agents: { defaults: { model, compaction: { threshold: 0.5, reserveTokens: 0, ...extra } } },
  models: { contextWindows: { [model]: 300 } },
});

async function transcript(gw: TestGateway): Promise<string> {
  const dir = path.join(gw.home, "agents", "main", "sessions");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".jsonl"));
  return (await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")))).join("");
}

const lastUserText = (prompt: unknown) =>
  JSON.stringify((prompt as Array<{ role: string }>).filter((m) => m.role === "user").at(-1));

describe("automatic compaction", () => {
  it("runs a silent memory flush that writes the day's memory file, compacts, tells the chat once, and continues from the summary", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([
      { text: "Noted." },
      {
        toolCalls: [
          { name: "write", input: { path: "memory/2026-01-31.md", content: "- birthday May 3, likes green tea\n" } },
        ],
      },
      { text: "saved" },
      { text: "The person's birthday is May 3; they like green tea." },
      { text: "Hello again!" },
    ]);
    const gw = await start({ adapters: [fake], model, now: () => NOW, config: small() });
    await send(gw, LONG);
    await send(gw, "hi");
    expect(fake.texts()).toEqual(["Noted.", COMPACTION_STRINGS.autoCompacted, "Hello again!"]);
    const workspace = gw.gateway.core.workspaceOf("main").location;
    expect(await readFile(path.join(workspace, "memory", "2026-01-31.md"), "utf8")).toBe(
      "- birthday May 3, likes green tea\n",
    );
    expect(lastUserText(model.prompts[1])).toContain("memory/2026-01-31.md");
    expect(model.calls[1]!.tools?.map((t) => t.name).sort()).toEqual(["edit", "list", "read", "write"]);
    const turn = JSON.stringify(model.prompts[4]);
    expect(turn).toContain(`${COMPACTION_MARKER} The person's birthday is May 3; they like green tea.`);
    expect(turn).not.toContain("Remember this");
    const lines = await transcript(gw);
    expect(lines).not.toContain("about to be compacted");
    expect(lines).not.toContain("saved");
    const entry = (await gw.gateway.core.sessions.forAgent("main")).store.get(KEY);
    expect(entry).toMatchObject({ compactionCount: 1, memoryFlushCompactionCount: 0, memoryFlushAt: NOW });
  }, 30_000);

  it("flushes at most once per compaction cycle, even when the compaction after it failed", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([
      { text: "Noted." },
      { text: "nothing to write" },
      { error: new Error("summarizer down") },
      { text: "second" },
      { text: "A summary." },
      { text: "third" },
    ]);
    const gw = await start({ adapters: [fake], model, now: () => NOW, config: small() });
    await send(gw, LONG);
    await send(gw, "two");
    await send(gw, "three");
    expect(model.calls).toHaveLength(6);
    expect(model.prompts.filter((p) => lastUserText(p).includes("about to be compacted"))).toHaveLength(1);
    expect(fake.texts()).toEqual(["Noted.", "second", COMPACTION_STRINGS.autoCompacted, "third"]);
    expect(gw.logger.records.some((r) => r.message === "automatic compaction failed")).toBe(true);
  }, 30_000);

  it("skips the memory flush when the workspace cannot be written, and still compacts", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([{ text: "Noted." }, { text: "A summary." }, { text: "Hello again!" }]);
    const home = await tempHome();
    await writeFile(path.join(home, "not-a-folder"), "");
    const config = {
      ...small(),
      agents: { ...small().agents, list: [{ id: "main", workspace: "not-a-folder/workspace" }] },
    };
    const gw = await start({ home, adapters: [fake], model, now: () => NOW, config });
    await send(gw, LONG);
    await send(gw, "hi");
    expect(model.calls).toHaveLength(3);
    expect(model.prompts.some((p) => lastUserText(p).includes("about to be compacted"))).toBe(false);
    expect(fake.texts()).toEqual(["Noted.", COMPACTION_STRINGS.autoCompacted, "Hello again!"]);
  }, 30_000);

  it("compacts the offline model's sessions without a memory flush", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], now: () => NOW, config: small("offline/echo") });
    await send(gw, LONG);
    await send(gw, "hi");
    expect(fake.texts()).toEqual([
      expect.stringContaining("Echo: Remember this"),
      COMPACTION_STRINGS.autoCompacted,
      "Echo: hi",
    ]);
    const workspace = gw.gateway.core.workspaceOf("main").location;
    expect(await readdir(path.join(workspace, "memory"))).toEqual([]);
    expect(await transcript(gw)).toContain(COMPACTION_MARKER);
  }, 30_000);

  it("leaves the context alone when agents.defaults.compaction.enabled is false", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], now: () => NOW, config: small("offline/echo", { enabled: false }) });
    await send(gw, LONG);
    await send(gw, "hi");
    expect(fake.texts()).toEqual([expect.stringContaining("Echo: Remember this"), "Echo: hi"]);
    expect(await transcript(gw)).not.toContain(COMPACTION_MARKER);
  }, 30_000);

  it("does not compact below the threshold", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], now: () => NOW, config: small("offline/echo") });
    await send(gw, "short");
    await send(gw, "hi");
    expect(fake.texts()).toEqual(["Echo: short", "Echo: hi"]);
  }, 30_000);

  it("does not count chat commands and their answers toward the threshold, as /status does not", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], now: () => NOW, config: small("offline/echo") });
    await send(gw, "short");
    // Each /help answer is far longer than the 150-token threshold; kept in history, never in the model's context.
    for (let i = 0; i < 3; i++) await send(gw, "/help");
    await send(gw, "hi");
    expect(fake.texts()).not.toContain(COMPACTION_STRINGS.autoCompacted);
    expect(await transcript(gw)).not.toContain(COMPACTION_MARKER);
  }, 30_000);
});
