// session.queue tried with the real gateway, the real Telegram adapter and a fake Bot API: a scripted
// slow model holds the first turn until the test has stored the messages that arrive during it.
import type { LanguageModelV3Prompt } from "../../src/agents/models/language-model-v3.js";
import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_NOTICES } from "../../src/agents/queue/queue-notices.js";
import { type FakeTelegramServer, TEST_BOT, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { until } from "../support/gateway-child.js";
import { startPlatformGateway } from "../support/platform-gateway.js";

const KEY = "agent:main:main";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A step the test lets finish with `release()`. */
function held(step: ScriptedStep): { step: ScriptedStep; release: () => void } {
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  return { step: { ...step, until }, release };
}

/** The text of every user message of a prompt, in order. */
const userTexts = (prompt: LanguageModelV3Prompt) =>
  prompt
    .filter((m) => m.role === "user")
    .map((m) => m.content.map((part) => (part.type === "text" ? part.text : "")).join(""));

/** A gateway whose model plays `steps`, with `session.queue` set to `queue`; Ada (111) owns it. */
async function setup(steps: ScriptedStep[], queue: Record<string, unknown>) {
  const fake: FakeTelegramServer = await startFakeTelegramServer();
  cleanups.push(fake.close);
  const model = createScriptedModel(steps);
  const gw = await startPlatformGateway({
    channel: {
      id: "telegram",
      settings: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, allowFrom: ["111"], owners: ["111"] },
    },
    model,
    config: { session: { queue } },
  });
  cleanups.push(gw.close);
  const core = gw.gateway.core;
  let id = 1;
  return {
    fake,
    model,
    core,
    send: (text: string) => fake.push(adaDm(text, id++)),
    sent: () => fake.sent.map((s) => s.text),
    /** waits until the first model call is in progress, then until `n` messages wait in the session's queue */
    waiting: (n: number) => until(() => core.runtime.waiting(KEY).messages === n),
    running: (calls: number) => until(() => model.calls.length === calls),
  };
}

/**
 * "a" starts a turn whose first model step (`first`) is held; `late` arrive during it and are
 * stored (`arrived`, default: all of them wait in the queue); then the step finishes and the
 * gateway goes idle.
 */
async function duringATurn(
  first: ScriptedStep,
  rest: ScriptedStep[],
  queue: Record<string, unknown>,
  late: string[],
  arrived: (t: Awaited<ReturnType<typeof setup>>) => Promise<void> = (t) => t.waiting(late.length),
) {
  const gate = held(first);
  const t = await setup([gate.step, ...rest], queue);
  t.send("a");
  await t.running(1);
  for (const text of late) t.send(text);
  await arrived(t);
  gate.release();
  await t.core.idle();
  return t;
}

describe("session.queue", () => {
  it("followup (the default): each message that arrives during a turn gets its own turn, in order", async () => {
    const t = await duringATurn({ text: "one" }, [{ text: "two" }, { text: "three" }], {}, ["b", "c"]);
    expect(t.sent()).toEqual(["one", "two", "three"]);
    expect(t.model.prompts.map((p) => userTexts(p).at(-1))).toEqual(["a", "b", "c"]);
  });

  it("collect: the messages that arrived during a turn are answered by one next turn that sees all of them, in order", async () => {
    const t = await duringATurn({ text: "one" }, [{ text: "both" }], { mode: "collect", debounceMs: 0 }, ["b", "c"]);
    expect(t.sent()).toEqual(["one", "both"]);
    expect(t.model.calls).toHaveLength(2);
    expect(userTexts(t.model.prompts[1]!).at(-1)).toBe("b\n\nc");
  });

  it("steer: a message that arrives during a turn is read at its next model step and answered in that turn", async () => {
    const first = { toolCalls: [{ name: "sessions_list", input: {} }] };
    const t = await duringATurn(first, [{ text: "answer to both" }], { mode: "steer" }, ["b"]);
    expect(t.sent()).toEqual(["answer to both"]);
    expect(t.model.calls).toHaveLength(2);
    const second = t.model.prompts[1]!;
    // After the tool result, in the order it arrived.
    expect(second.at(-1)).toMatchObject({ role: "user" });
    expect(second.at(-2)).toMatchObject({ role: "tool" });
    expect(userTexts(second)).toEqual(["a", "b"]);
  });

  it("steer: a message that arrives while the model writes its last step gets another round of the same turn", async () => {
    const t = await duringATurn({ text: "draft" }, [{ text: "final" }], { mode: "steer" }, ["b"]);
    expect(t.sent()).toEqual(["final"]);
    expect(userTexts(t.model.prompts[1]!)).toEqual(["a", "b"]);
  });

  it("interrupt: a new message aborts the running turn (nothing of it is sent) and starts a new one", async () => {
    // The first answer would take a minute; the abort ends the wait.
    const t = await setup([{ text: "never sent", delayMs: 60_000 }, { text: "second" }], { mode: "interrupt" });
    t.send("a");
    await t.running(1);
    t.send("b");
    await t.core.idle();
    expect(t.sent()).toEqual(["second"]);
    expect(t.core.runs.recent().map((r) => r.status)).toEqual(["ok", "aborted"]);
    expect(userTexts(t.model.prompts[1]!).at(-1)).toBe("b");
  });

  it.each([
    ["refuse", QUEUE_NOTICES.refused(1), "b"],
    ["drop-oldest", QUEUE_NOTICES.dropped(1), "c"],
  ])("cap 1, overflow %s: the sender is told the message that was not run", async (overflow, notice, answered) => {
    const told = (t: Awaited<ReturnType<typeof setup>>) => until(() => t.sent().includes(notice));
    const t = await duringATurn({ text: "one" }, [{ text: "two" }], { cap: 1, overflow }, ["b", "c"], told);
    expect(t.sent().sort()).toEqual([notice, "one", "two"].sort());
    expect(t.model.calls).toHaveLength(2);
    expect(userTexts(t.model.prompts[1]!).at(-1)).toBe(answered);
  });

  it("cap 1, overflow summarize: the oldest waiting message is shortened to a line the next turn reads", async () => {
    const t = await duringATurn({ text: "one" }, [{ text: "two" }], { cap: 1, overflow: "summarize" }, ["b", "c"]);
    expect(t.sent()).toEqual(["one", "two"]);
    expect(userTexts(t.model.prompts[1]!).at(-1)).toBe('[1 earlier message shortened while you were busy: "b"]\n\nc');
  });
});
