import { describe, expect, it } from "vitest";
import type { GatewayClient } from "../../src/cli/gateway-client.js";
import { recordAnnounce } from "../../src/tools/announce-record.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { nextEvent, useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

async function turn(client: GatewayClient, sessionKey: string, message: string): Promise<void> {
  const sent = (await client.call("chat.send", { sessionKey, message })) as { status: string; runId: string };
  if (sent.status === "started") await client.call("agent.wait", { runId: sent.runId, timeoutMs: 20_000 });
}

/** A parent that spawns one sub-agent on the `child` model, then answers "spawned". */
function spawningModels(childSteps: Parameters<typeof createScriptedModel>[0]) {
  const parent = createScriptedModel([
    { toolCalls: [{ name: "sessions_spawn", input: { task: "dig up the facts", label: "digger", model: "child" } }] },
    { text: "spawned" },
    { text: "next answer" },
  ]);
  const child = createScriptedModel(childSteps);
  return {
    parent,
    child,
    options: {
      models: { "test/parent": parent, "test/child": child },
      config: { agents: { defaults: { model: "test/parent" } }, models: { aliases: { child: "test/child" } } },
    },
  };
}

describe("sessions.create", () => {
  it("gives a new, distinct conversation key of the agent on the client channel, and refuses an unknown agent", async () => {
    const gw = await start();
    const client = await gw.client();
    const first = (await client.call("sessions.create", {})) as { key: string };
    const second = (await client.call("sessions.create", { agentId: "main" })) as { key: string };
    expect(first.key).toMatch(/^agent:main:webchat:dm:[0-9a-f-]{36}$/);
    expect(second.key).not.toBe(first.key);
    await turn(client, first.key, "hello there");
    const history = (await client.call("chat.history", { sessionKey: first.key })) as { messages: unknown[] };
    expect(history.messages).toHaveLength(2);
    await expect(client.call("sessions.create", { agentId: "nobody" })).rejects.toThrow(/unknown agent "nobody"/);
  });
});

describe("sessions.get", () => {
  it("describes a session before it exists, after a turn, and after /send off", async () => {
    const gw = await start();
    const client = await gw.client();
    const key = "agent:main:webchat:dm:panel";
    expect(await client.call("sessions.get", { key })).toMatchObject({
      key,
      kind: "dm",
      exists: false,
      model: "offline/echo",
      sendPolicy: { override: "inherit", effective: "allow" },
      busy: false,
      activeRuns: [],
      subagents: [],
      failures: [],
    });
    await turn(client, key, "hello");
    const after = (await client.call("sessions.get", { key })) as { session: { totalTokens: number } };
    expect(after).toMatchObject({ exists: true, session: { key } });
    expect(after.session.totalTokens).toBeGreaterThan(0);
    await turn(client, key, "/send off");
    expect(await client.call("sessions.get", { key })).toMatchObject({
      sendPolicy: { override: "deny", effective: "deny" },
    });
  });

  it("gives the same context estimate as /status on the same session, and a title", async () => {
    const gw = await start();
    const client = await gw.client();
    await turn(client, "main", "a message long enough to weigh a few tokens in the context");
    const status = (await client.call("chat.send", { sessionKey: "main", message: "/status" })) as { reply: string };
    const info = (await client.call("sessions.get", { key: "main" })) as {
      title: string;
      context: { tokens: number; messages: number; window: number; text: string };
    };
    expect(info.context.tokens).toBeGreaterThan(0);
    expect(info.context.messages).toBe(2);
    expect(info.context.text).toMatch(/^~\d+ of \d+k tokens in 2 messages$/);
    expect(status.reply).toContain(`Context: ${info.context.text} ·`);
    expect(info.title).toBe("Main session");
  });

  it("names the session key that cannot be read", async () => {
    const client = await (await start()).client();
    await expect(client.call("sessions.get", { key: "agent::" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("sub-agent announces in the requester's history", () => {
  it("keeps the announce in chat.history, tells the session's clients, and never gives it to the model", async () => {
    const { parent, options } = spawningModels([
      { text: "the facts" },
      { text: "Result: found the facts\nNotes: none" },
    ]);
    const gw = await start(options);
    const client = await gw.client();
    const announced = nextEvent<{ state: string; sessionKey: string }>(client, "chat", (p) => p.state === "announce");
    const delivered = nextEvent<{ kind: string; text: string }>(client, "chat.delivery", (p) => p.kind === "announce");
    await turn(client, "main", "research this");
    // The session's clients are told to look again; the text itself comes one way: as a delivery.
    expect(await announced).toMatchObject({ sessionKey: "agent:main:main" });
    const event = await delivered;
    expect(event.text).toContain("found the facts");

    const history = (await client.call("chat.history", { sessionKey: "main" })) as {
      messages: Array<{ role: string; content: unknown; announce?: boolean }>;
    };
    const kept = history.messages.filter((m) => m.announce === true);
    expect(kept).toEqual([expect.objectContaining({ role: "assistant", content: event.text })]);

    await turn(client, "main", "and now?");
    const lastPrompt = JSON.stringify(parent.prompts.at(-1));
    expect(lastPrompt).toContain("and now?");
    expect(lastPrompt).not.toContain("found the facts");
  });
});

describe("recordAnnounce", () => {
  it("keeps an announce replayed after a restart once, and keeps nothing for a session without an entry", async () => {
    const gw = await start();
    const client = await gw.client();
    await turn(client, "main", "hello");
    const { core } = gw.gateway;
    const main = core.parseKey("main").parsed;
    const announce = { id: "announce:run-1", text: "Result: done" };
    expect(await recordAnnounce(core, main, "main", announce)).toBe(true);
    expect(await recordAnnounce(core, main, "main", { ...announce, text: "Result: done, again" })).toBe(false);
    const history = (await client.call("chat.history", { sessionKey: "main" })) as {
      messages: Array<{ announce?: boolean; content: unknown }>;
    };
    expect(history.messages.filter((m) => m.announce)).toEqual([expect.objectContaining({ content: "Result: done" })]);
    expect(await recordAnnounce(core, core.parseKey("agent:main:webchat:dm:none").parsed, "main", announce)).toBe(
      false,
    );
  });
});

describe("sessions.list", () => {
  it("titles a sub-agent's session by its task (or label), the main session as such, and searches titles", async () => {
    const { options } = spawningModels([{ text: "the facts" }, { text: "Result: done" }]);
    const gw = await start(options);
    const client = await gw.client();
    await turn(client, "main", "research this");
    await turn(client, "agent:main:webchat:dm:4f1c2a7e-0000-4000-8000-000000000000", "hello");
    const { sessions } = (await client.call("sessions.list", {})) as {
      sessions: Array<{ key: string; kind: string; title: string }>;
    };
    const titles = Object.fromEntries(sessions.map((s) => [s.kind, s.title]));
    // The spawn gave a label ("digger"): a label wins over the task.
    expect(titles).toEqual({ main: "Main session", subagent: "digger", dm: "Web chat 4f1c2a7e" });
    const found = (await client.call("sessions.list", { search: "web chat 4f1c" })) as { sessions: unknown[] };
    expect(found.sessions).toHaveLength(1);
  });
});

describe("subagents.stop", () => {
  it("stops one running sub-agent of the session and refuses a run that is not one of its sub-agents", async () => {
    const { options } = spawningModels([{ text: "slow", delayMs: 20_000 }]);
    const gw = await start(options);
    const client = await gw.client();
    await turn(client, "main", "research this");
    const { core } = gw.gateway;
    await expect.poll(() => core.subagents.list("agent:main:main").map((r) => r.state)).toEqual(["running"]);
    const [record] = core.subagents.list("agent:main:main");
    await expect(
      client.call("subagents.stop", { sessionKey: "agent:main:webchat:dm:other", runId: record!.runId }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await client.call("subagents.stop", { sessionKey: "main", runId: record!.runId })).toEqual({
      ok: true,
      stopped: 1,
    });
    await expect.poll(() => core.runs.get(record!.runId)?.status).toBe("aborted");
  });
});

describe("commands.list", () => {
  it("lists the slash commands with their usage for completion", async () => {
    const client = await (await start()).client();
    const { commands } = (await client.call("commands.list")) as { commands: Array<{ name: string; usage: string }> };
    expect(commands).toContainEqual(expect.objectContaining({ name: "send", usage: "/send on|off|inherit" }));
    expect(commands.map((c) => c.name)).toContain("status");
  });
});
