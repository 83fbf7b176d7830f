import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DiscordMessageEvent, commandToInbound, toInbound } from "../../../adapters/discord/index.js";
import { parseConfig } from "../table-config.js";
import { resolveAccess } from "../../../src/inbound/access.js";
import { InboundMessageSchema } from "../../../src/index.js";
import { routeInputFromInbound } from "../../../src/routing/inbound-message.js";
import { runAdapterContract } from "../../contracts/adapter-contract.js";
import { DISCORD_BOT, WORLD } from "../../fakes/fake-discord-server.js";
import { discordContractLive, discordContractPlatform } from "./discord-harness.js";

const fixturesDir = path.resolve(import.meta.dirname, "../../fixtures/discord");
const bot = DISCORD_BOT.user;
const ada = { id: WORLD.ada.id, name: "Ada", username: "ada" };
const general = { type: "channel", id: WORLD.general, guildId: WORLD.guild, title: "#general" };

runAdapterContract<DiscordMessageEvent>({
  channel: "discord",
  fixturesDir,
  toInbound: (event) => toInbound(event, bot),
  threads: false,
  platformMaxTextLength: 2000,
  platform: discordContractPlatform,
  live: discordContractLive,
  targets: {
    samples: [
      { channel: "discord", to: `channel:${WORLD.general}` },
      { channel: "discord", to: `channel:${WORLD.thread}` },
      { channel: "discord", to: "channel:500000000000000001" },
      { channel: "discord", to: `user:${WORLD.ada.id}` },
    ],
    bad: ["", WORLD.general, "channel:general", "user:", "guild:1", "<#700000000000000001>"],
  },
  inbound: {
    "dm-text": {
      accountId: "default",
      chat: { type: "direct", id: "500000000000000001", guildId: undefined },
      sender: ada,
      messageId: "1100000000000000001",
      text: "hello there",
      timestamp: Date.parse("2026-01-01T00:00:00Z"),
      wasMentioned: false,
    },
    "guild-plain": { chat: general, sender: ada, text: "just chatting", wasMentioned: false },
    "guild-mention": { chat: general, text: "what is up?", wasMentioned: true },
    "guild-mention-nickname-form": { chat: general, text: "/status", wasMentioned: true },
    "guild-mention-other": { chat: general, text: "<@600000000000000002> lunch?", wasMentioned: false },
    "guild-reply-to-bot": {
      text: "and then?",
      wasMentioned: true,
      replyTo: { messageId: "1000000000000000009", text: "Step one is done.", fromBot: true },
    },
    "guild-reply-to-person": {
      wasMentioned: false,
      replyTo: { messageId: "1000000000000000010", text: "tabs over spaces", fromBot: false },
    },
    "thread-message": {
      chat: {
        type: "channel",
        id: WORLD.thread,
        guildId: WORLD.guild,
        parentId: WORLD.general,
        title: "#general › bug-triage",
      },
      text: "in the thread",
    },
    "member-nickname": { sender: { id: WORLD.ada.id, name: "Captain Ada", username: "ada" } },
    "own-message": null,
    "other-bot": null,
    "webhook-message": null,
    "slash-command-leftover": null,
    "system-pin": null,
    "user-join": null,
    "group-dm": null,
    "attachment-only": null,
  },
});

const fixture = (name: string) =>
  JSON.parse(readFileSync(path.join(fixturesDir, `${name}.json`), "utf8")) as DiscordMessageEvent;

describe("toInbound (discord)", () => {
  it("takes other bots' and webhooks' messages when allowBots is set, never the bot's own", () => {
    expect(toInbound(fixture("other-bot"), bot, { allowBots: true })?.text).toBe("beep");
    expect(toInbound(fixture("webhook-message"), bot, { allowBots: true })?.text).toBe("deployed v2");
    expect(toInbound(fixture("own-message"), bot, { allowBots: true })).toBeNull();
  });

  it("maps a group DM to a group chat keyed by its channel when groupDms is set", () => {
    const message = toInbound(fixture("group-dm"), bot, { groupDms: true });
    expect(message?.chat).toEqual({ type: "group", id: "500000000000000099", title: "weekend plans" });
    expect(routeInputFromInbound(message!).peer).toEqual({ kind: "group", id: "500000000000000099" });
  });

  it("keys a DM by its author, a guild channel by the channel (with the guild for bindings), a thread by itself", () => {
    const dm = routeInputFromInbound(toInbound(fixture("dm-text"), bot)!);
    expect(dm.peer).toEqual({ kind: "dm", id: WORLD.ada.id });
    const channel = routeInputFromInbound(toInbound(fixture("guild-plain"), bot)!);
    expect(channel).toMatchObject({ peer: { kind: "channel", id: WORLD.general }, guildId: WORLD.guild });
    const thread = routeInputFromInbound(toInbound(fixture("thread-message"), bot)!);
    expect(thread.peer).toEqual({ kind: "channel", id: WORLD.thread });
  });

  it("applies the parent channel's rules to a thread", () => {
    const { config } = parseConfig({
      channels: {
        discord: {
          groupPolicy: "open",
          guilds: { [WORLD.guild]: { channels: { [WORLD.general]: { requireMention: false } } } },
        },
      },
    });
    const inThread = toInbound(fixture("thread-message"), bot)!;
    expect(resolveAccess(config, inThread)).toMatchObject({ allowed: true, needsMention: false });
    const { config: closed } = parseConfig({
      channels: {
        discord: {
          groupPolicy: "open",
          guilds: { [WORLD.guild]: { channels: { [WORLD.general]: { allow: false } } } },
        },
      },
    });
    expect(resolveAccess(closed, inThread).allowed).toBe(false);
  });

  it("does not count @everyone or a mention of one of the bot's roles as addressing the bot", () => {
    const event = fixture("guild-plain");
    const everyone = { ...event, message: { ...event.message, content: "@everyone hi", mention_everyone: true } };
    const role = {
      ...event,
      message: { ...event.message, content: "<@&1500000000000000001> hi", mention_roles: ["1500000000000000001"] },
    };
    expect(toInbound(everyone, bot)?.wasMentioned).toBe(false);
    expect(toInbound(role, bot)?.wasMentioned).toBe(false);
  });

  it("refuses a payload without an author with the path that is wrong", () => {
    const bad = { message: { id: "1", channel_id: "2", content: "x", timestamp: "2026-01-01T00:00:00Z", type: 0 } };
    expect(() => toInbound(bad as never, bot)).toThrow(/malformed Discord message: .*author/);
  });
});

describe("commandToInbound", () => {
  it("maps a slash command to the chat it was typed in, with its name and arguments", () => {
    const message = commandToInbound({
      id: "1300000000000000001",
      name: "send",
      input: " off ",
      channelId: WORLD.thread,
      guildId: WORLD.guild,
      channel: { type: 11, name: "bug-triage", parentId: WORLD.general, parentName: "general" },
      user: { id: WORLD.ada.id, username: "ada", globalName: "Ada" },
    });
    expect(InboundMessageSchema.parse(message)).toEqual(message);
    expect(message).toMatchObject({
      chat: { type: "channel", id: WORLD.thread, parentId: WORLD.general, guildId: WORLD.guild },
      sender: ada,
      text: "/send off",
      command: { name: "send", args: "off" },
      wasMentioned: true,
    });
  });

  it("maps a slash command in a DM to the DM of the person who typed it", () => {
    const message = commandToInbound({
      id: "1300000000000000002",
      name: "status",
      channelId: "500000000000000001",
      user: { id: WORLD.ada.id, username: "ada" },
    });
    expect(message.chat).toEqual({ type: "direct", id: "500000000000000001" });
    expect(routeInputFromInbound(message).peer).toEqual({ kind: "dm", id: WORLD.ada.id });
    expect(message.text).toBe("/status");
  });
});
