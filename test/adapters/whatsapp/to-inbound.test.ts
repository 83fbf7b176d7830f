import path from "node:path";
import { describe, expect, it } from "vitest";
import { type InboundContext, type UpsertItem, mapUpsert, toInbound } from "../../../adapters/whatsapp/index.js";
import { runAdapterContract } from "../../contracts/adapter-contract.js";
import { waMessage } from "../../fakes/fake-whatsapp.js";
import { ADA, GROUP, whatsappContractLive, whatsappContractPlatform } from "./whatsapp-harness.js";

const SELF = { pn: "15550001111@s.whatsapp.net", lid: "88880001111@lid" };
const CONTEXT: InboundContext = { accountId: "default", self: SELF, groupSubjects: { [GROUP]: "Family Chat" } };
const family = { type: "group", id: GROUP, title: "Family Chat" };
const grace = { id: "+15550004444", name: "Grace" };

runAdapterContract<UpsertItem>({
  channel: "whatsapp",
  fixturesDir: path.resolve(import.meta.dirname, "../../fixtures/whatsapp"),
  toInbound: (item) => toInbound(item, CONTEXT),
  threads: false,
  platformMaxTextLength: 65_536,
  platform: whatsappContractPlatform,
  live: whatsappContractLive,
  targets: {
    samples: [
      { channel: "whatsapp", to: "+15550009999" },
      { channel: "whatsapp", to: GROUP },
    ],
    bad: ["", "ada", "12345", "+1555abc", "120363000000000001@broadcast", "status@broadcast", "1@lid"],
  },
  inbound: {
    "dm-phone": {
      accountId: "default",
      chat: { type: "direct", id: ADA, title: undefined },
      sender: { id: ADA, name: "Ada" },
      messageId: "3EB0A1",
      text: "hello from Ada",
      timestamp: 1767225600000,
      wasMentioned: false,
      replyTo: undefined,
    },
    "dm-lid-with-alt": { chat: { type: "direct", id: "+15550003333" }, sender: { id: "+15550003333", name: "Lin" } },
    "dm-lid-unknown": null,
    "dm-device-suffix": { chat: { type: "direct", id: ADA }, sender: { id: ADA } },
    "group-mention": { chat: family, sender: grace, text: "what is the plan?", wasMentioned: true },
    "group-mention-by-lid": {
      chat: family,
      sender: { id: "+15550005555", name: "Lid User" },
      text: "/status",
      wasMentioned: true,
    },
    "group-plain": { chat: family, sender: grace, text: "just chatting", wasMentioned: false },
    "group-mentions-someone-else": { text: "@15550007777 over to you", wasMentioned: false },
    "group-reply-to-bot": {
      chat: family,
      text: "thanks, and then?",
      wasMentioned: true,
      replyTo: { messageId: "BOT77", text: "Step one is done.", fromBot: true },
    },
    "dm-quoted-reply": {
      text: "what about this one?",
      replyTo: { messageId: "3EB0XX", text: "my earlier note", fromBot: false },
    },
    "dm-ephemeral": { text: "disappearing hello" },
    "dm-view-once-image": { text: "look once" },
    "dm-image-caption": { text: "a photo of the whiteboard" },
    "dm-image-without-caption": null,
    "history-append": null,
    "status-broadcast": null,
    newsletter: null,
    "own-message": null,
    reaction: null,
  },
});

describe("mapUpsert", () => {
  const dm = (key: Record<string, unknown>, text = "hi") =>
    ({
      type: "notify",
      message: waMessage({ key: { remoteJid: "77770003333@lid", ...key }, message: { conversation: text } }),
    }) as UpsertItem;

  it("resolves a LID sender through the socket's LID mapping the adapter looked up", () => {
    const mapped = toInbound(dm({}), { ...CONTEXT, lidToPn: { "77770003333@lid": "15550003333@s.whatsapp.net" } });
    expect(mapped).toMatchObject({ chat: { type: "direct", id: "+15550003333" }, sender: { id: "+15550003333" } });
  });

  it("says why a DM from an unknown LID is dropped, so it is logged and never routed by a privacy id", () => {
    expect(mapUpsert(dm({}), CONTEXT)).toEqual({ dropped: "the phone number of 77770003333@lid is unknown" });
  });

  it("answers the owner's self-chat only in selfChatMode, as the owner's number", () => {
    const self = {
      type: "notify",
      message: waMessage({
        key: { remoteJid: "15550001111@s.whatsapp.net", fromMe: true },
        message: { conversation: "/status" },
      }),
    } as UpsertItem;
    expect(toInbound(self, CONTEXT)).toBeNull();
    expect(toInbound(self, { ...CONTEXT, selfChatMode: true })).toMatchObject({
      chat: { type: "direct", id: "+15550001111" },
      sender: { id: "+15550001111" },
      text: "/status",
    });
  });

  it("never answers the echo of a message the bot sent, even in the self-chat", () => {
    const echo = {
      type: "notify",
      message: waMessage({
        key: { remoteJid: "15550001111@s.whatsapp.net", fromMe: true, id: "BOT5" },
        message: { conversation: "Echo: hi" },
      }),
    } as UpsertItem;
    expect(mapUpsert(echo, { ...CONTEXT, selfChatMode: true, sentByBot: new Set(["BOT5"]) })).toEqual({
      dropped: "sent by the bot",
    });
  });

  it("ignores an @-mention of the owner's own number in groups in selfChatMode", () => {
    const mention = {
      type: "notify",
      message: waMessage({
        key: { remoteJid: GROUP, participant: "15550004444@s.whatsapp.net" },
        message: {
          extendedTextMessage: { text: "ask Sam", contextInfo: { mentionedJid: ["15550001111@s.whatsapp.net"] } },
        },
      }),
    } as UpsertItem;
    expect(toInbound(mention, CONTEXT)?.wasMentioned).toBe(true);
    expect(toInbound(mention, { ...CONTEXT, selfChatMode: true })?.wasMentioned).toBe(false);
  });

  it("counts a group message that starts with @<the bot's number> as a mention, even without mentionedJid", () => {
    const typed = {
      type: "notify",
      message: waMessage({
        key: { remoteJid: GROUP, participant: "15550004444@s.whatsapp.net" },
        message: { conversation: "@15550001111 /new" },
      }),
    } as UpsertItem;
    expect(toInbound(typed, CONTEXT)).toMatchObject({ text: "/new", wasMentioned: true });
  });

  it.each([
    ["no message", { type: "notify", message: undefined }],
    ["no key", { type: "notify", message: { message: { conversation: "x" } } }],
    ["no chat", { type: "notify", message: { key: { id: "X1" }, message: { conversation: "x" } } }],
    [
      "a number as text",
      { type: "notify", message: { key: { remoteJid: "1@s.whatsapp.net", id: "X2" }, message: { conversation: 5 } } },
    ],
  ])("drops a malformed upsert (%s) with a reason instead of throwing", (_name, item) => {
    expect(mapUpsert(item as unknown as UpsertItem, CONTEXT)).toHaveProperty("dropped");
  });

  it("keeps a group participant whose number is unknown under its LID (the group, not the sender, keys the session)", () => {
    const item = {
      type: "notify",
      message: waMessage({
        key: { remoteJid: GROUP, participant: "66660009999@lid" },
        message: { conversation: "hello all" },
      }),
    } as UpsertItem;
    expect(toInbound(item, CONTEXT)).toMatchObject({ chat: { id: GROUP }, sender: { id: "66660009999@lid" } });
  });
});
