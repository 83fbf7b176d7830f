import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { COMMANDS } from "../../src/commands/command-table.js";
import { apology } from "../../src/errors.js";
import {
  COMMAND_USER,
  GATEWAY_CLIENT,
  OWNER,
  TALKER,
  createCommandHarness,
  dm,
  inGroup,
  terminal,
} from "./command-harness.js";

const OWN_DM = "agent:main:telegram:dm:42";
const OWNERS = { channels: { telegram: { owners: ["42"], commandAllowFrom: ["7"] } } };

describe("createCommandDispatcher", () => {
  describe("who may run a command and what it changes (docs/commands.md)", () => {
    it("sets the override for an owner's /send off and says so", async () => {
      const h = await createCommandHarness({ config: OWNERS });
      const outcome = await h.dispatch(dm("42", "/send off"));
      expect(outcome?.reply).toContain(STRINGS.sendSet("off"));
      expect(h.store.get(OWN_DM)?.sendPolicy).toBe("deny");
    });

    it("plain text, and the reply adds the effective policy: stores allow for on and deny for off", async () => {
      const h = await createCommandHarness({ config: OWNERS });
      expect((await h.dispatch(dm("42", "/send on")))?.reply).toBe(
        `${STRINGS.sendSet("on")} Replies here are delivered (this session's /send override).`,
      );
      expect(h.store.get(OWN_DM)?.sendPolicy).toBe("allow");
      await h.dispatch(dm("42", "/send off"));
      expect(h.store.get(OWN_DM)?.sendPolicy).toBe("deny");
    });

    it("removes the override for /send inherit", async () => {
      const h = await createCommandHarness({ config: OWNERS });
      await h.seed(OWN_DM, { sendPolicy: "deny" });
      expect((await h.dispatch(dm("42", "/send inherit")))?.reply).toContain(STRINGS.sendSet("inherit"));
      expect(h.store.get(OWN_DM)).not.toHaveProperty("sendPolicy");
    });

    it.each(["/send", "/send maybe"])("answers %s with the usage", async (text) => {
      const h = await createCommandHarness({ config: OWNERS });
      expect((await h.dispatch(dm("42", text)))?.reply).toContain(STRINGS.usage(COMMANDS.send.usage));
      expect(h.store.get(OWN_DM)).toBeUndefined();
    });

    it("one short refusal in a DM, silence in a group: changes nothing for a non-owner", async () => {
      const h = await createCommandHarness({ config: OWNERS });
      expect(await h.dispatch(dm("7", "/send on"), COMMAND_USER)).toEqual({
        reply: STRINGS.refusedOwner("/send"),
        refused: true,
      });
      expect(await h.dispatch(dm("8", "/send on"), TALKER)).toEqual({ reply: STRINGS.refusedCommands, refused: true });
      expect(await h.dispatch(inGroup("7", "/send on"), COMMAND_USER)).toEqual({ refused: true });
      expect(h.store.list()).toEqual([]);
      expect(h.logger.records.filter((r) => r.message === "command refused")).toHaveLength(3);
    });

    it("runs /send on in a session whose override is deny", async () => {
      const h = await createCommandHarness({ config: OWNERS });
      await h.seed(OWN_DM, { sendPolicy: "deny" });
      expect((await h.dispatch(dm("42", "/send on")))?.reply).toContain(STRINGS.sendSet("on"));
    });

    it("the policy gates delivery, not processing: lets plain text through", async () => {
      const h = await createCommandHarness({ config: { ...OWNERS, session: { sendPolicy: { default: "deny" } } } });
      expect(await h.dispatch(dm("42", "hello"))).toBeNull();
    });

    it("leaves typed /send to the model on Telegram with commands.text off, but not on WhatsApp or as a native command", async () => {
      const h = await createCommandHarness({ config: { commands: { text: false } } });
      expect(await h.dispatch(dm("42", "/send on"))).toBeNull();
      expect((await h.dispatch({ ...dm("42", "/send on"), channel: "whatsapp" }))?.reply).toContain(
        STRINGS.sendSet("on"),
      );
      const native = { ...h.context(dm("42", "")), command: { name: "send", args: "on" } };
      expect((await h.dispatcher.dispatch(native))?.reply).toContain(STRINGS.sendSet("on"));
    });

    it("runs a group /send on that mentioned the bot (the adapter stripped the mention)", async () => {
      const h = await createCommandHarness();
      const outcome = await h.dispatch({
        channel: "whatsapp",
        chat: { type: "group", id: "g1@g.us" },
        sender: { id: "+1000" },
        text: "/send on",
        wasMentioned: true,
      });
      expect(outcome?.reply).toContain(STRINGS.sendSet("on"));
      expect(h.store.get("agent:main:whatsapp:group:g1@g.us")?.sendPolicy).toBe("allow");
    });

    it("a refusal in a DM: refuses an unauthorized /new and returns an authorized one as a reset", async () => {
      const h = await createCommandHarness();
      expect(await h.dispatch(dm("42", "/new"), TALKER)).toEqual({ reply: STRINGS.refusedCommands, refused: true });
      expect(await h.dispatch(inGroup("42", "/new"), COMMAND_USER)).toEqual({ refused: true });
      expect(await h.dispatch(dm("42", "/new"), COMMAND_USER)).toEqual({ reset: { firstMessage: "", said: "/new" } });
    });

    it("returns /new take notes as a reset whose first message is the rest", async () => {
      const h = await createCommandHarness();
      const takeNotes = { reset: { firstMessage: "take notes", said: "/new take notes" } };
      expect(await h.dispatch(dm("42", "/new take notes"))).toEqual(takeNotes);
      expect(await h.dispatch(dm("42", "/new:  take notes"))).toEqual(takeNotes);
      expect(await h.dispatch(dm("42", "/RESET"))).toEqual({ reset: { firstMessage: "", said: "/reset" } });
      expect(await h.dispatch(dm("42", "hello"))).toBeNull();
    });

    it("answers /context, /context list and /context detail", async () => {
      const h = await createCommandHarness();
      expect((await h.dispatch(dm("42", "/context")))?.reply).toContain("/context list");
      expect((await h.dispatch(dm("42", "/context list")))?.reply).toContain(STRINGS.contextTitle(false));
      expect((await h.dispatch(dm("42", "/context detail")))?.reply).toContain(STRINGS.contextTitle(true));
    });

    it("answers an unknown /context mode with the mode error and the usage", async () => {
      const h = await createCommandHarness();
      expect((await h.dispatch(dm("42", "/context bogus")))?.reply).toBe(
        STRINGS.usage(COMMANDS.context.usage, "Unknown /context mode."),
      );
    });

    it.each(["/status", "/compact", "/stop"])(
      "a refusal in a DM, silence in a group: keeps %s from a sender without commands",
      async (text) => {
        const h = await createCommandHarness();
        expect(await h.dispatch(dm("8", text), TALKER)).toEqual({ reply: STRINGS.refusedCommands, refused: true });
        expect(await h.dispatch(inGroup("8", text), TALKER)).toEqual({ refused: true });
      },
    );

    it("handles /stop with commands.text off", async () => {
      const h = await createCommandHarness({ config: { commands: { text: false } } });
      expect((await h.dispatch(dm("42", "/stop")))?.reply).toBe(STRINGS.aborted);
    });

    it("no prefix stripping: aborts for /stop but not for a timestamped stop", async () => {
      const h = await createCommandHarness();
      expect((await h.dispatch(dm("42", "/stop")))?.reply).toBe(STRINGS.aborted);
      expect(await h.dispatch(dm("42", "[Dec 5 10:00] stop"))).toBeNull();
    });

    it("bare stop is an abort word only for senders allowed commands: treats a bare stop from a sender without commands as text", async () => {
      const h = await createCommandHarness({ steps: [{ text: "slow", delayMs: 100 }] });
      await h.seed(OWN_DM);
      const { done } = h.runtime.enqueue({
        parsed: h.context(dm("42", "hi")).sessionKey,
        agentId: "main",
        prompt: "hi",
        deliver: false,
      });
      expect(await h.dispatch(dm("42", "stop"), TALKER)).toBeNull();
      expect(await done).toMatchObject({ status: "ok" });
      expect(h.store.get(OWN_DM)?.abortedLastRun).toBe(false);
    });

    it("leaves an inline /status to the model", async () => {
      const h = await createCommandHarness();
      expect(await h.dispatch(dm("8", "please /status now"), TALKER)).toBeNull();
    });
  });

  it("answers a handler that throws unexpectedly with an apology and an error id, and logs the whole error under that id", async () => {
    const h = await createCommandHarness({ steps: [{ error: new Error("socket hang up at 10.0.0.7:443") }] });
    await h.seed(OWN_DM, {}, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    const reply = (await h.dispatch(dm("42", "/compact")))?.reply ?? "";
    const errorId = /\(error id ([0-9a-f]{8})\)/.exec(reply)?.[1];
    expect(errorId).toBeDefined();
    expect(reply).toBe(STRINGS.failed("/compact", apology(errorId!)));
    expect(reply).not.toContain("10.0.0.7");
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: "command failed",
        fields: expect.objectContaining({
          command: "/compact",
          errorId,
          err: expect.objectContaining({ message: "socket hang up at 10.0.0.7:443", stack: expect.any(String) }),
        }),
      }),
    );
  });

  it("answers a known failure with its own message: a provider refusing the model says so, without an error id", async () => {
    const refused = new APICallError({
      message: "Incorrect API key provided: sk-abc",
      url: "https://api.example.test/v1/chat",
      requestBodyValues: {},
      statusCode: 401,
      isRetryable: false,
    });
    const h = await createCommandHarness({ steps: [{ error: refused }] });
    await h.seed(OWN_DM, {}, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    const reply = (await h.dispatch(dm("42", "/compact")))?.reply;
    expect(reply).toBe(
      STRINGS.failed("/compact", "The model provider answered with HTTP 401; check the model's key and name."),
    );
    expect(reply).not.toContain("sk-abc");
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        level: "warn",
        fields: expect.objectContaining({ code: "MODEL_FAILED", err: expect.objectContaining({ cause: refused }) }),
      }),
    );
  });

  it("runs every command for the terminal chat (a gateway client acts as the owner)", async () => {
    const h = await createCommandHarness();
    for (const text of [
      "/help",
      "/status",
      "/send off",
      "/send on",
      "/stop",
      "/compact",
      "/context list",
      "/subagents",
    ]) {
      expect((await h.dispatch(terminal(text), GATEWAY_CLIENT))?.reply, text).toBeTruthy();
    }
    expect(await h.dispatch(terminal("/new"), GATEWAY_CLIENT)).toEqual({ reset: { firstMessage: "", said: "/new" } });
  });

  it("refuses a non-owner's reset of a shared session but not of their own DM", async () => {
    const h = await createCommandHarness({ config: { session: { dmScope: "main" } } });
    expect(await h.dispatch(dm("7", "/reset"), COMMAND_USER)).toEqual({
      reply: STRINGS.refusedOwnSession("/reset"),
      refused: true,
    });
    expect(await h.dispatch(dm("42", "/reset"), OWNER)).toEqual({ reset: { firstMessage: "", said: "/reset" } });
  });

  it("handles a configured reset trigger like /reset", async () => {
    const h = await createCommandHarness({ config: { session: { resetTriggers: ["/fresh"] } } });
    expect(await h.dispatch(dm("7", "/fresh start"), TALKER)).toEqual({
      reply: STRINGS.refusedCommands,
      refused: true,
    });
    expect(await h.dispatch(dm("42", "/fresh start"), OWNER)).toEqual({
      reset: { firstMessage: "start", said: "/fresh start" },
    });
  });
});
