// Native commands (Discord's slash commands): a message with `command` set and, where the platform
// has one, an interaction that is deferred at once and answered instead of the chat.
import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter, createRecordingInteraction } from "../fakes/fake-channel-adapter.js";
import { type TestGateway, useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

// 42 owns the bot, 7 may run commands, 8 may only talk.
const CHANNEL = { owners: ["42"], commandAllowFrom: ["7"], allowFrom: ["8"], groupPolicy: "open" };
const PER_SENDER = { dmScope: "per-channel-peer" };

let seq = 0;
function native(sender: string, name: string, args = "", chat: Record<string, unknown> = {}): InboundMessage {
  return InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: sender, ...chat },
    sender: { id: sender },
    messageId: `n${++seq}`,
    text: `/${name}${args ? ` ${args}` : ""}`,
    command: { name, args },
  });
}
const inGroup = { type: "group", id: "-100" };

async function gateway(): Promise<{ gw: TestGateway; fake: ReturnType<typeof createFakeChannelAdapter> }> {
  const fake = createFakeChannelAdapter({ id: "telegram", nativeCommands: true });
  const gw = await start({ adapters: [fake], config: { channels: { telegram: CHANNEL }, session: PER_SENDER } });
  return { gw, fake };
}

async function sendPolicyOf(gw: TestGateway, key: string): Promise<string | undefined> {
  const { store } = await gw.gateway.core.sessions.forAgent("main");
  return store.get(key)?.sendPolicy;
}

describe("native commands with an interaction", () => {
  it("runs an owner's /send off on the session of the chat it was typed in and answers publicly, not in the chat", async () => {
    const { gw, fake } = await gateway();
    const interaction = createRecordingInteraction();
    await fake.receive(native("42", "send", "off", inGroup), interaction);
    const answer = await interaction.replied;
    expect(answer).toEqual({ text: expect.stringContaining(STRINGS.sendSet("off")), ephemeral: false });
    expect(interaction.calls[0]).toEqual({ call: "defer" });
    expect(interaction.calls.filter((c) => c.call === "reply")).toHaveLength(1);
    expect(await sendPolicyOf(gw, "agent:main:telegram:group:-100")).toBe("deny");
    // The owner's own DM session is another session: untouched.
    expect(await sendPolicyOf(gw, "agent:main:telegram:dm:42")).toBeUndefined();
    expect(fake.texts()).toEqual([]);
  });

  it("refuses a non-owner's /send ephemerally, in a DM and in a group, and changes nothing", async () => {
    const { gw, fake } = await gateway();
    for (const chat of [{}, inGroup]) {
      const interaction = createRecordingInteraction();
      await fake.receive(native("7", "send", "off", chat), interaction);
      expect(await interaction.replied).toEqual({ text: STRINGS.refusedOwner("/send"), ephemeral: true });
    }
    expect(await sendPolicyOf(gw, "agent:main:telegram:group:-100")).toBeUndefined();
    expect(await sendPolicyOf(gw, "agent:main:telegram:dm:7")).toBeUndefined();
    expect(fake.texts()).toEqual([]);
  });

  it("tells a sender who may not use commands so, ephemerally, instead of leaving the command unanswered", async () => {
    const { fake } = await gateway();
    const interaction = createRecordingInteraction();
    await fake.receive(native("99", "status"), interaction);
    expect(await interaction.replied).toEqual({ text: STRINGS.refusedCommands, ephemeral: true });
  });

  it("answers /help ephemerally", async () => {
    const { fake } = await gateway();
    const interaction = createRecordingInteraction();
    await fake.receive(native("42", "help"), interaction);
    expect(await interaction.replied).toEqual({ text: expect.stringContaining(STRINGS.helpTitle), ephemeral: true });
    expect(fake.texts()).toEqual([]);
  });

  it("answers a command name it does not know with an ephemeral pointer to /help, and starts no turn", async () => {
    const { gw, fake } = await gateway();
    const interaction = createRecordingInteraction();
    await fake.receive(native("42", "frobnicate", "now"), interaction);
    expect(await interaction.replied).toEqual({ text: STRINGS.unknownCommand("frobnicate"), ephemeral: true });
    expect(gw.gateway.core.runs.recent()).toEqual([]);
    expect(fake.texts()).toEqual([]);
  });

  it("logs an interaction whose answer fails and keeps serving", async () => {
    const { gw, fake } = await gateway();
    const broken = createRecordingInteraction({ failReply: new Error("interaction token expired") });
    await fake.receive(native("42", "status"), broken);
    await broken.replied;
    await expect.poll(() => gw.logger.records.some((r) => r.message === "native command answer failed")).toBe(true);
    const next = createRecordingInteraction();
    await fake.receive(native("42", "send", "off"), next);
    expect((await next.replied).text).toContain(STRINGS.sendSet("off"));
    expect(await sendPolicyOf(gw, "agent:main:telegram:dm:42")).toBe("deny");
  });

  it("answers a native command without an interaction (Telegram's menu) in the chat, as a typed command", async () => {
    const { gw, fake } = await gateway();
    await fake.receive(native("42", "send", "off"));
    await expect.poll(() => fake.texts()).toEqual([expect.stringContaining(STRINGS.sendSet("off"))]);
    expect(await sendPolicyOf(gw, "agent:main:telegram:dm:42")).toBe("deny");
  });
});
