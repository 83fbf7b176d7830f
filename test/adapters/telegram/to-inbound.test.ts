import path from "node:path";
import type { Update } from "grammy/types";
import { toInbound } from "../../../adapters/telegram/index.js";
import { describe, expect, it } from "vitest";
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
    // The adapter strips its own leading mention; wasMentioned keeps that the bot was addressed.
    "group-mention-entity": { chat: team, text: "what is up?", wasMentioned: true },
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
    "photo-caption": { chat: team, text: "what is in this picture?", wasMentioned: true },
    "command-this-bot": { chat: team, text: "/status", wasMentioned: true },
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

describe("toInbound: this bot's mentions", () => {
  const group = (text: string) =>
    ({
      update_id: 1,
      message: {
        message_id: 1,
        date: 1767225600,
        chat: { id: -1001234567890, type: "supergroup", title: "Team Chat" },
        from: { id: 111, is_bot: false, first_name: "Ada" },
        text,
      },
    }) as Update;
  const textOf = (text: string) => toInbound(group(text), TEST_BOT.info)?.text;

  it.each([
    ["@SwitchboardTestBot /new hello", "/new hello"],
    ["@switchboardtestbot   /status", "/status"],
    ["/new@SwitchboardTestBot gpt-4o Hi", "/new gpt-4o Hi"],
    ["/send@SwitchboardTestBot: off", "/send: off"],
    ["@SwitchboardTestBot", "@SwitchboardTestBot"],
    ["@alice /send off", "@alice /send off"],
    ["Note: /new please", "Note: /new please"],
    ["hi @SwitchboardTestBot", "hi @SwitchboardTestBot"],
  ])("reads %j as %j", (text, expected) => {
    expect(textOf(text)).toBe(expected);
  });

  it("drops a command addressed to another bot, mention or not", () => {
    expect(toInbound(group("/status@OtherBot"), TEST_BOT.info)).toBeNull();
    expect(toInbound(group("/new@OtherBot hello"), TEST_BOT.info)).toBeNull();
  });

  it("reads each bot's own mention when one gateway runs two bots", () => {
    const other = { id: 4242, username: "Other_Bot" };
    for (let round = 0; round < 2; round++) {
      expect(toInbound(group("@Other_Bot /status"), other)).toMatchObject({ text: "/status", wasMentioned: true });
      expect(toInbound(group("@Other_Bot /status"), TEST_BOT.info)).toMatchObject({
        text: "@Other_Bot /status",
        wasMentioned: false,
      });
      expect(toInbound(group("hi @SwitchboardTestBot"), other)).toMatchObject({ wasMentioned: false });
      expect(toInbound(group("hi @SwitchboardTestBot"), TEST_BOT.info)).toMatchObject({ wasMentioned: true });
    }
  });
});
