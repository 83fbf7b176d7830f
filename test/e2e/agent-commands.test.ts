import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type TestGateway, useTestGateways } from "../support/test-gateway.js";
import { telegramDmFrom } from "../support/telegram-dm.js";

const start = useTestGateways();
const KEY = "agent:main:telegram:dm:42";
let seq = 0;
const dm = (sender: string, text: string) => telegramDmFrom(sender, text, { messageId: `g${++seq}` });

async function send(gw: TestGateway, text: string, sender = "42") {
  const result = await gw.gateway.core.pipeline.handleInbound(dm(sender, text));
  if (result.status === "queued") await result.done;
  return result;
}
const reply = async (gw: TestGateway, text: string) => ((await send(gw, text)) as { reply?: string }).reply ?? "";

const CONFIG = {
  // Two people DM the bot, each in their own session.
  session: { dmScope: "per-channel-peer" },
  channels: { telegram: { owners: ["42"], allowFrom: ["8"] } },
  agents: { defaults: { model: "offline/echo" } },
  models: { aliases: { smart: "openai/o3-mini", mini: "openai/gpt-4o-mini" } },
};

describe("/model", () => {
  it("lists the models with this session's marked, switches by alias, provider/model or provider, and a new session goes back", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([{ text: "from o3" }, { text: "from mini" }]);
    const gw = await start({
      adapters: [fake],
      config: CONFIG,
      models: { "openai/o3-mini": model, "openai/gpt-4o-mini": model },
    });
    expect((await reply(gw, "/model")).split("\n")).toEqual([
      STRINGS.modelTitle,
      "* offline/echo",
      "- openai/o3-mini (smart)",
      "- openai/gpt-4o-mini (mini)",
    ]);
    expect(await reply(gw, "/model smart")).toBe(STRINGS.modelSet("openai/o3-mini"));
    expect(await reply(gw, "/model")).toContain("* openai/o3-mini (smart)");
    await send(gw, "hi");
    expect(await reply(gw, "/model openai/gpt-4o-mini")).toBe(STRINGS.modelSet("openai/gpt-4o-mini"));
    await send(gw, "hi again");
    expect(fake.texts().filter((t) => t.startsWith("from"))).toEqual(["from o3", "from mini"]);
    expect(await reply(gw, "/status")).toContain("Model: openai/gpt-4o-mini");
    expect(await reply(gw, "/model gpt-9000")).toBe(
      STRINGS.modelUnknown("gpt-9000", "offline/echo, openai/o3-mini (smart), openai/gpt-4o-mini (mini)"),
    );
    expect(await reply(gw, "/model openai")).toBe(STRINGS.modelSet("openai/o3-mini"));
    await send(gw, "/new");
    expect(await reply(gw, "/model")).toContain("* offline/echo");
  });

  it("lets another command user switch the model of their own DM session only", async () => {
    const gw = await start({
      config: { ...CONFIG, channels: { telegram: { owners: ["42"], allowFrom: ["8"], commandAllowFrom: ["8"] } } },
    });
    expect(await reply(gw, "/model mini")).toBe(STRINGS.modelSet("openai/gpt-4o-mini"));
    const other = (await send(gw, "/model smart", "8")) as { reply?: string };
    expect(other.reply).toBe(STRINGS.modelSet("openai/o3-mini"));
    const store = (await gw.gateway.core.sessions.forAgent("main")).store;
    expect(store.get(KEY)).toMatchObject({ providerOverride: "openai", modelOverride: "gpt-4o-mini" });
    expect(store.get("agent:main:telegram:dm:8")).toMatchObject({ modelOverride: "o3-mini" });
  });
});

describe("/think", () => {
  it("stores the level, shows it in /status, passes it to a reasoning model, and a new session clears it", async () => {
    const model = createScriptedModel([{ text: "thought" }, { text: "plain" }]);
    const gw = await start({ model, config: { ...CONFIG, agents: { defaults: { model: "openai/o3-mini" } } } });
    expect(await reply(gw, "/think")).toBe(STRINGS.thinkShown("off", true));
    expect(await reply(gw, "/think high")).toBe(STRINGS.thinkSet("high", true));
    expect(await reply(gw, "/status")).toContain("Thinking: high · Verbose: off");
    await send(gw, "hard question");
    expect(model.calls[0]!.providerOptions).toEqual({ openai: { reasoningEffort: "high" } });
    await send(gw, "/new");
    expect(await reply(gw, "/status")).toContain("Thinking: off");
    await send(gw, "easy question");
    expect(model.calls[1]!.providerOptions).toBeUndefined();
  });

  it("accepts aliases, refuses unknown levels with the usage, and warns when the model cannot reason", async () => {
    const gw = await start({ config: CONFIG });
    expect(await reply(gw, "/t min")).toBe(STRINGS.thinkSet("minimal", false));
    expect(await reply(gw, "/think banana")).toBe(
      STRINGS.usage("/think off|minimal|low|medium|high", 'Unknown value "banana".'),
    );
    expect(await reply(gw, "/think off")).toBe(STRINGS.thinkSet("off", false));
    expect((await gw.gateway.core.sessions.forAgent("main")).store.get(KEY)?.thinkingLevel).toBeUndefined();
  });
});

describe("/verbose", () => {
  it("sends a one-line summary of each tool call while a run lasts when on, nothing when off", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const model = createScriptedModel([
      { toolCalls: [{ name: "write", input: { path: "notes.md", content: "x" } }] },
      { text: "Saved your note." },
      { toolCalls: [{ name: "list", input: {} }] },
      { text: "Listed." },
    ]);
    const gw = await start({
      adapters: [fake],
      model,
      config: { ...CONFIG, agents: { defaults: { model: "test/m" } } },
    });
    expect(await reply(gw, "/verbose on")).toBe(STRINGS.verboseSet(true));
    expect(await reply(gw, "/status")).toContain("Thinking: off · Verbose: on");
    await send(gw, "save a note");
    expect(await reply(gw, "/verbose off")).toBe(STRINGS.verboseSet(false));
    await send(gw, "list");
    expect(fake.texts()).toEqual([
      STRINGS.verboseSet(true),
      expect.stringContaining("Verbose: on"),
      '🔧 write {"path":"notes.md","content":"x"}',
      "Saved your note.",
      STRINGS.verboseSet(false),
      "Listed.",
    ]);
  });

  it("shows the tool-call lines in the web and terminal chat too, as chat.delivery events of the session, before the reply", async () => {
    const model = createScriptedModel([{ toolCalls: [{ name: "list", input: {} }] }, { text: "Listed." }]);
    const gw = await start({ model, config: { ...CONFIG, agents: { defaults: { model: "test/m" } } } });
    const client = await gw.client();
    await client.call("subscribe", { sessionKeys: ["main"] });
    const seen: string[] = [];
    client.onEvent(
      (event, payload) => void (event === "chat.delivery" && seen.push((payload as { text: string }).text)),
    );
    await client.call("chat.send", { message: "/verbose on" });
    const started = await client.call<{ runId: string }>("chat.send", { message: "list my files" });
    await client.call("agent.wait", { runId: started.runId });
    await expect.poll(() => seen).toEqual(["🔧 list {}", "Listed."]);
  });
});

describe("/context list with a workspace", () => {
  it("shows each workspace file with its size, marks the ones cut, and the sizes add up to the total", async () => {
    const gw = await start({
      config: { ...CONFIG, agents: { defaults: { model: "offline/echo", workspace: { promptFileMaxChars: 300 } } } },
    });
    await writeFile(
      path.join(gw.gateway.core.workspaceOf("main").location, "MEMORY.md"),
      `# Notes\n${"- a durable fact\n".repeat(40)}`,
    );
    await send(gw, "hello");
    const list = await reply(gw, "/context list");
    const lines = list.split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- AGENTS\.md: ~\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- USER\.md: ~\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- MEMORY\.md: ~\d+ \(cut: 300 of \d+ characters\)$/));
    expect(lines).toContain("Cut to fit: MEMORY.md");
    expect(list).toMatch(
      /Tools \(10\): sessions_list, sessions_history, sessions_send, sessions_spawn, agents_list, read, write, append, edit, list/,
    );
    const report = JSON.parse(await reply(gw, "/context json")) as {
      systemPrompt: { parts: Array<{ tokens: number }>; tokens: number };
      history: { tokens: number };
      totalTokens: number;
    };
    const partSum = report.systemPrompt.parts.reduce((sum, p) => sum + p.tokens, 0);
    expect(report.systemPrompt.tokens).toBe(partSum);
    expect(report.totalTokens).toBe(partSum + report.history.tokens);
    const listed = lines.filter((l) => /^ {2}- /.test(l)).map((l) => Number(/~(\d+)/.exec(l)![1]));
    expect(listed.reduce((a, b) => a + b, 0)).toBe(partSum);
    expect(await reply(gw, "/context detail")).toContain("      - a durable fact");
  });

  it("starts a new agent's workspace with the starter files and keeps the owner's edits", async () => {
    const gw = await start({ config: CONFIG });
    const dir = gw.gateway.core.workspaceOf("main").location;
    expect(dir).toBe(path.join(gw.home, "agents", "main", "workspace"));
    expect((await readdir(dir)).sort()).toEqual(["AGENTS.md", "MEMORY.md", "USER.md", "memory"]);
    await writeFile(path.join(dir, "USER.md"), "Owner: Ann");
    await gw.gateway.close();
    const again = await start({ home: gw.home, config: CONFIG });
    expect(await reply(again, "/context detail")).toContain("Owner: Ann");
  });
});
