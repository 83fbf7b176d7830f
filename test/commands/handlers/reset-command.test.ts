import { describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { describeCatalog, looksLikeModel, unknownModelReply } from "../../../src/commands/handlers/reset-command.js";
import { COMMAND_USER, createCommandHarness, dm } from "../command-harness.js";

const catalog = {
  entries: [
    { provider: "offline", model: "echo" },
    { provider: "openai", model: "gpt-4o-mini", aliases: ["mini"] },
  ],
};

describe("looksLikeModel", () => {
  it.each<[string, boolean]>([
    ["gpt-x", true],
    ["GPT4", true],
    ["claude-3-opus", true],
    ["llama3.1:8b", true],
    ["o3-mini", true],
    ["anthropic", true],
    ["openai/gpt-9", true],
    ["offline/nope", true],
    ["hello", false],
    ["summarize", false],
    ["and/or", false],
    ["http://example.com", false],
    ["gptx", false],
  ])("%s: %s", (word, expected) => {
    expect(looksLikeModel(word, catalog)).toBe(expected);
  });
});

describe("unknownModelReply", () => {
  it("lists the valid models for a model word the catalog does not have", () => {
    expect(unknownModelReply("gpt-x tell me more", catalog)).toEqual({
      reply: STRINGS.unknownModel("gpt-x", "offline/echo, openai/gpt-4o-mini (mini)"),
    });
    expect(unknownModelReply("anthropic", catalog)?.reply).toContain('Unknown model "anthropic"');
  });

  it("says nothing when the words pick a model or are just a message", () => {
    expect(unknownModelReply("mini hi", catalog)).toBeUndefined();
    expect(unknownModelReply("openai/gpt-4o-mini", catalog)).toBeUndefined();
    expect(unknownModelReply("hello there", catalog)).toBeUndefined();
    expect(unknownModelReply("", catalog)).toBeUndefined();
  });

  it("describes a catalog with its aliases", () => {
    expect(describeCatalog(catalog)).toBe("offline/echo, openai/gpt-4o-mini (mini)");
  });
});

describe("newCommand", () => {
  it("answers /new with an unknown model and leaves the session alone", async () => {
    const h = await createCommandHarness();
    const entry = await h.seed("agent:main:telegram:dm:42");
    expect(await h.dispatch(dm("42", "/new gpt-x"))).toEqual({ reply: STRINGS.unknownModel("gpt-x", "offline/echo") });
    expect(h.store.get("agent:main:telegram:dm:42")?.sessionId).toBe(entry.sessionId);
  });

  it("returns a command user's /new in their own DM as a reset, and the turn's start applies it on the picked model", async () => {
    const h = await createCommandHarness({
      config: { models: { aliases: { mini: "openai/gpt-4o-mini" } } },
      steps: [{ text: "Hi there" }],
    });
    const old = await h.seed("agent:main:telegram:dm:7");
    const context = h.context(dm("7", "/new mini hello"), COMMAND_USER);
    const outcome = await h.dispatcher.dispatch(context);
    expect(outcome).toEqual({
      reset: {
        firstMessage: "hello",
        said: "/new mini hello",
        model: { provider: "openai", model: "gpt-4o-mini" },
      },
    });
    const { done } = h.runtime.enqueue({
      parsed: context.sessionKey,
      agentId: "main",
      message: context.message,
      reset: outcome!.reset!,
    });
    expect(await done).toMatchObject({ status: "ok", text: "Hi there" });
    const entry = h.store.get("agent:main:telegram:dm:7")!;
    expect(entry.sessionId).not.toBe(old.sessionId);
    expect(entry).toMatchObject({
      providerOverride: "openai",
      modelOverride: "gpt-4o-mini",
      model: "openai/gpt-4o-mini",
    });
    expect(JSON.stringify(h.model.prompts[0]!.at(-1))).toContain("hello");
  });

  it("returns a group trigger (its mention already stripped by the adapter) as a reset the turn applies", async () => {
    const h = await createCommandHarness({ steps: [{ text: "Hello again" }] });
    const old = await h.seed("agent:main:telegram:group:-100");
    const context = h.context({
      channel: "telegram",
      chat: { type: "group", id: "-100" },
      sender: { id: "42" },
      text: "/new draft the agenda",
      wasMentioned: true,
    });
    const outcome = await h.dispatcher.dispatch(context);
    expect(outcome).toEqual({ reset: { firstMessage: "draft the agenda", said: "/new draft the agenda" } });
    const { done } = h.runtime.enqueue({
      parsed: context.sessionKey,
      agentId: "main",
      message: context.message,
      reset: outcome!.reset!,
      deliver: false,
    });
    expect(await done).toMatchObject({ status: "ok" });
    expect(h.store.get("agent:main:telegram:group:-100")!.sessionId).not.toBe(old.sessionId);
    expect((await h.transcript("agent:main:telegram:group:-100")).map((m) => m.content)).toEqual([
      "draft the agenda",
      [{ type: "text", text: "Hello again" }],
    ]);
  });
});
