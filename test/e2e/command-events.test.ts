import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { STRINGS } from "../../src/commands/command-strings.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { nextEvent, useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

interface ChatEvent {
  sessionKey: string;
  runId: string;
  state: string;
  role?: string;
  text?: string;
  command?: true;
}

interface History {
  messages: Array<{ role: string; content: unknown; command?: true }>;
}

/** Collects the `chat` events a client receives. */
function chatEvents(client: { onEvent(listener: (event: string, payload: unknown) => void): () => void }): ChatEvent[] {
  const seen: ChatEvent[] = [];
  client.onEvent((event, payload) => void (event === "chat" && seen.push(payload as ChatEvent)));
  return seen;
}

describe("commands sent through chat.send", () => {
  it("reach every client of the session as chat events, stay in chat.history, and never reach the model", async () => {
    const model = createScriptedModel([{ text: "first answer" }, { text: "second answer" }]);
    const gw = await start({ model });
    const tabA = await gw.client();
    const tabB = await gw.client();
    const seenByB = chatEvents(tabB);
    const first = await tabA.call<{ runId: string }>("chat.send", { sessionKey: "main", message: "hello" });
    await tabA.call("agent.wait", { runId: first.runId, timeoutMs: 10_000 });

    const reply = nextEvent<ChatEvent>(tabB, "chat", (p) => p.command === true && p.role === "assistant");
    const sent = await tabA.call<{ status: string; reply: string }>("chat.send", {
      sessionKey: "main",
      message: "/send off",
      idempotencyKey: "cmd-1",
    });
    expect(sent).toMatchObject({ status: "command", reply: expect.stringContaining(STRINGS.sendSet("off")) });
    expect(await reply).toMatchObject({
      sessionKey: "agent:main:main",
      runId: "cmd-1",
      state: "final",
      text: sent.reply,
    });
    expect(seenByB.filter((e) => e.command)).toEqual([
      {
        sessionKey: "agent:main:main",
        runId: "cmd-1",
        state: "command",
        role: "user",
        text: "/send off",
        command: true,
      },
      {
        sessionKey: "agent:main:main",
        runId: "cmd-1",
        state: "final",
        role: "assistant",
        text: sent.reply,
        command: true,
      },
    ]);

    // A reload shows the command and its reply where they happened.
    const history = await tabB.call<History>("chat.history", { sessionKey: "main" });
    expect(history.messages.map((m) => [m.role, m.content, m.command ?? false])).toEqual([
      ["user", "hello", false],
      ["assistant", [{ type: "text", text: "first answer" }], false],
      ["user", "/send off", true],
      ["assistant", sent.reply, true],
    ]);

    const second = await tabA.call<{ runId: string }>("chat.send", { sessionKey: "main", message: "and now?" });
    await tabA.call("agent.wait", { runId: second.runId, timeoutMs: 10_000 });
    const prompt = JSON.stringify(model.prompts[1]);
    expect(prompt).toContain("first answer");
    expect(prompt).not.toContain("/send off");
    expect(prompt).not.toContain("Send policy set to off");
  });

  it("shows a command and its reply to a session's clients before the session has history, without a transcript", async () => {
    const gw = await start();
    const watcher = await gw.client();
    const seen = chatEvents(watcher);
    await (await gw.client()).call("chat.send", {
      sessionKey: "agent:main:cron:nightly",
      message: "/help",
      idempotencyKey: "h1",
    });
    await expect
      .poll(() => seen.map((e) => [e.role, e.state]))
      .toEqual([
        ["user", "command"],
        ["assistant", "final"],
      ]);
    expect((await watcher.call<History>("chat.history", { sessionKey: "agent:main:cron:nightly" })).messages).toEqual(
      [],
    );
  });

  it("keeps a Telegram command in the session's history, but never a refused one", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({
      adapters: [fake],
      config: {
        channels: { telegram: { owners: ["42"], allowFrom: ["42", "8"] } },
        session: { dmScope: "per-channel-peer" },
      },
    });
    const dm = (sender: string, text: string, id: string) =>
      InboundMessageSchema.parse({
        channel: "telegram",
        chat: { type: "direct", id: sender },
        sender: { id: sender },
        messageId: id,
        text,
      });
    for (const [sender, text, id] of [
      ["8", "hi", "m1"],
      ["8", "/status", "m2"],
      ["42", "hi", "m3"],
      ["42", "/status", "m4"],
    ] as const) {
      const result = await gw.gateway.core.pipeline.handleInbound(dm(sender, text, id));
      if (result.status === "queued") await result.done;
    }
    const client = await gw.client();
    const roles = async (key: string) =>
      (await client.call<History>("chat.history", { sessionKey: key })).messages.map(
        (m) => `${m.role}${m.command ? " (command)" : ""}`,
      );
    expect(fake.texts()).toContain(STRINGS.refusedCommands);
    expect(await roles("agent:main:telegram:dm:8")).toEqual(["user", "assistant"]);
    expect(await roles("agent:main:telegram:dm:42")).toEqual([
      "user",
      "assistant",
      "user (command)",
      "assistant (command)",
    ]);
  });
});

describe("switchboard chat", () => {
  it("prints a command another client sent in its session, and the reply", async () => {
    const gw = await start();
    const stdin = new PassThrough();
    let stdout = "";
    const io = {
      env: { SWITCHBOARD_HOME: gw.home },
      stdin,
      cwd: gw.home,
      homeDir: gw.home,
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: () => true },
    };
    const ended = runCli(["chat", "--url", gw.gateway.url], io);
    await expect.poll(() => stdout).toContain("-- agent:main:main");
    await (await gw.client()).call("chat.send", { sessionKey: "main", message: "/send off" });
    await expect.poll(() => stdout).toContain(`you: /send off\nagent: ${STRINGS.sendSet("off")}`);
    stdin.end();
    expect(await ended).toBe(0);
  });
});
