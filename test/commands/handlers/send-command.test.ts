import { describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";

describe("sendCommand", () => {
  it("creates the entry of a session that has not run yet, and leaves updatedAt of one that has", async () => {
    const h = await createCommandHarness();
    await h.dispatch(dm("42", "/send off"));
    expect(h.store.get(KEY)).toMatchObject({ sendPolicy: "deny", updatedAt: h.clock.now() });
    h.clock.advance(60_000);
    await h.dispatch(dm("42", "/send on"));
    expect(h.store.get(KEY)).toMatchObject({ sendPolicy: "allow", updatedAt: h.clock.now() - 60_000 });
  });

  it("writes nothing for /send inherit when there is no override", async () => {
    const h = await createCommandHarness();
    expect((await h.dispatch(dm("42", "/send inherit")))?.reply).toContain(STRINGS.sendSet("inherit"));
    expect(h.store.get(KEY)).toBeUndefined();
  });

  // What decides after the command, for the send-policy vectors.
  it.each<[string, Record<string, unknown>, string, string]>([
    ["an off override over the default allow", {}, "/send off", "not delivered (this session's /send override)"],
    [
      "a deny rule for the channel and chat type",
      { rules: [{ action: "deny", match: { channel: "telegram", chatType: "direct" } }] },
      "/send inherit",
      "not delivered (rule session.sendPolicy.rules[0])",
    ],
    ["a deny default", { default: "deny" }, "/send inherit", "not delivered (session.sendPolicy.default: deny)"],
    [
      "an allow rule over a deny default",
      { default: "deny", rules: [{ action: "allow", match: { channel: "telegram" } }] },
      "/send inherit",
      "delivered (rule session.sendPolicy.rules[0])",
    ],
    [
      "a later matching deny over an earlier allow",
      {
        rules: [
          { action: "allow", match: { channel: "telegram" } },
          { action: "deny", match: { chatType: "dm" } },
        ],
      },
      "/send inherit",
      "not delivered (rule session.sendPolicy.rules[1])",
    ],
    [
      "an on override over a deny-all rule",
      { default: "deny", rules: [{ action: "deny" }] },
      "/send on",
      "delivered (this session's /send override)",
    ],
  ])("%s: replies that messages are %s", async (_name, sendPolicy, text, effective) => {
    const h = await createCommandHarness({ config: { session: { sendPolicy } } });
    expect((await h.dispatch(dm("42", text)))?.reply).toContain(`Replies here are ${effective}.`);
  });

  it("keeps the override across /new", async () => {
    const h = await createCommandHarness({ steps: [{ text: "hi" }] });
    await h.dispatch(dm("42", "/send off"));
    const before = h.store.get(KEY)!;
    const context = h.context(dm("42", "/new"));
    const outcome = await h.dispatcher.dispatch(context);
    const { done } = h.runtime.enqueue({
      parsed: context.sessionKey,
      agentId: "main",
      message: context.message,
      reset: outcome!.reset!,
    });
    expect(await done).toMatchObject({ status: "ok" });
    expect(h.store.get(KEY)).toMatchObject({ sendPolicy: "deny" });
    expect(h.store.get(KEY)!.sessionId).not.toBe(before.sessionId);
  });
});
