import path from "node:path";
import type { Update } from "grammy/types";
import { toInbound } from "../../../adapters/telegram/index.js";
import { runAdapterContract } from "../../contracts/adapter-contract.js";
import { TEST_BOT } from "../../fakes/fake-telegram-server.js";
import { telegramContractLive, telegramContractPlatform } from "./telegram-harness.js";

const ada = { id: "111", name: "Ada Lovelace", username: "ada" };
const team = { type: "group", id: "-1001234567890", title: "Team Chat" };
const forum = { type: "group", id: "-1002000000001", title: "Project Forum", isForum: true };

runAdapterContract<Update>({
  channel: "telegram",
  fixturesDir: path.resolve(import.meta.dirname, "../../fixtures/telegram"),
  toInbound: (update) => toInbound(update, TEST_BOT.info),
  threads: true,
  platformMaxTextLength: 4096,
  platform: telegramContractPlatform,
  live: telegramContractLive,
  targets: {
    samples: [
      { channel: "telegram", to: "111" },
      { channel: "telegram", to: "-1001234567890" },
      { channel: "telegram", to: "-1002000000001", threadId: "42" },
      { channel: "telegram", to: "@switchboard_news" },
    ],
    bad: ["", "not-a-chat", "-100123:topic:zero", "@ab"],
  },
  inbound: {
    "dm-text": {
      accountId: "default",
      chat: { type: "direct", id: "111" },
      sender: ada,
      messageId: "10",
      text: "hello there",
      timestamp: 1767225600000,
      wasMentioned: false,
    },
    "dm-thread": { chat: { type: "direct", id: "111", threadId: "77" }, text: "in a thread" },
    "group-plain": {
      chat: { type: "group", id: "-4001234567", title: "Book Club" },
      text: "just chatting",
      wasMentioned: false,
    },
    "group-mention-entity": { chat: team, text: "@SwitchboardTestBot what is up?", wasMentioned: true },
    "group-mention-plain-text": { chat: team, wasMentioned: true },
    "group-text-mention": { chat: team, wasMentioned: true },
    "group-mention-other": { chat: team, wasMentioned: false },
    "group-reply-to-bot": {
      chat: team,
      wasMentioned: true,
      replyTo: { messageId: "5", text: "Here is the first part.", fromBot: true },
    },
    "group-reply-thread": {
      chat: { ...team, threadId: undefined, isForum: undefined },
      sender: { id: "222", name: "Bob" },
      replyTo: { messageId: "12", text: "shall we ship?", fromBot: false },
      wasMentioned: false,
    },
    "forum-topic": { chat: { ...forum, threadId: "42" }, wasMentioned: true, replyTo: undefined },
    "forum-general": { chat: { ...forum, threadId: "1" }, wasMentioned: true },
    "forum-general-reply": {
      chat: { ...forum, threadId: "1" },
      replyTo: { messageId: "20", fromBot: false },
      wasMentioned: false,
    },
    "quote-reply": { replyTo: { messageId: "6", text: "Step two.", fromBot: true }, wasMentioned: true },
    "photo-caption": { chat: team, text: "@SwitchboardTestBot what is in this picture?", wasMentioned: true },
    "command-this-bot": { chat: team, text: "/status@SwitchboardTestBot", wasMentioned: true },
    "command-plain": { chat: team, text: "/status", wasMentioned: false },
    "command-other-bot": null,
    "anonymous-admin": {
      sender: { id: "-1001234567890", name: "Team Chat", username: "teamchat" },
      wasMentioned: true,
    },
    sticker: null,
    "new-members": null,
    "edited-message": null,
    "channel-post": null,
  },
});
