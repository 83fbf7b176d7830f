import { describe, expect, it } from "vitest";
import { parseConfig } from "../adapters/table-config.js";
import type { ChannelCapabilities } from "../../src/delivery/channel-adapter.js";
import { listIncludes, resolveAccess } from "../../src/inbound/access.js";
import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";

const configWith = (channels: Record<string, unknown>) => parseConfig({ channels }).config;

/** A Telegram DM from 42 (@Ada) unless fields say otherwise. */
const message = (fields: Record<string, unknown> = {}): InboundMessage =>
  InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: "42" },
    sender: { id: "42", username: "Ada" },
    text: "hi",
    ...fields,
  });

const fromSender = (id: string, username?: string, fields: Record<string, unknown> = {}) =>
  message({ chat: { type: "direct", id }, sender: { id, ...(username && { username }) }, ...fields });

const inGroup = (sender: string, chat: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) =>
  message({ chat: { type: "group", id: "-100", ...chat }, sender: { id: sender }, ...fields });

const tiers = (decision: ReturnType<typeof resolveAccess>) => ({
  allowed: decision.allowed,
  commands: decision.commands,
  owner: decision.owner,
});

describe("resolveAccess", () => {
  describe("direct messages", () => {
    it.each([
      ["allows an allowlisted id", { allowFrom: ["42"] }, "42", true],
      ["refuses an id not on the allowlist", { allowFrom: ["42"] }, "43", false],
      ["refuses everyone with an empty allowlist", { allowFrom: [] }, "42", false],
      ["refuses everyone when the channel sets nothing", {}, "42", false],
      ["allows everyone under an explicit '*'", { allowFrom: ["*"] }, "999", true],
      ["allows everyone when dmPolicy is open", { dmPolicy: "open" }, "999", true],
      [
        "refuses an allowlisted id when dmPolicy is disabled",
        { dmPolicy: "disabled", allowFrom: ["42"], owners: [] },
        "42",
        false,
      ],
      [
        "allows an owner taken from allowFrom when dmPolicy is disabled",
        { dmPolicy: "disabled", allowFrom: ["42"] },
        "42",
        true,
      ],
      [
        "refuses a command user when dmPolicy is disabled",
        { dmPolicy: "disabled", commandAllowFrom: ["42"] },
        "42",
        false,
      ],
      ["allows an owner when dmPolicy is disabled", { dmPolicy: "disabled", owners: ["42"] }, "42", true],
      ["reads an id written as a number", { allowFrom: [42] }, "42", true],
    ])("%s", (_, telegram, sender, allowed) => {
      const decision = resolveAccess(configWith({ telegram }), fromSender(sender));
      expect(decision.allowed).toBe(allowed);
      expect(decision.needsMention).toBe(false);
      if (!allowed) expect(decision.reason).toBe("dm-not-allowed");
    });

    it("leaves out channels that are not configured", () => {
      const config = configWith({ discord: { dmPolicy: "open" } });
      expect(resolveAccess(config, fromSender("42")).allowed).toBe(false);
      expect(resolveAccess(config, fromSender("42", undefined, { channel: "discord" })).allowed).toBe(true);
    });

    it.each([
      ["@ada", "Ada", true],
      ["@ADA", "ada", true],
      ["@Ada", "@Ada", true],
      ["ada", "Ada", false],
      ["@bob", "Ada", false],
      ["telegram:42", undefined, true],
      ["tg:42", undefined, true],
      ["TG:42", undefined, true],
      ["telegram:@Ada", "Ada", true],
      ["discord:42", undefined, false],
      [" 42 ", undefined, true],
    ])("matches the entry %j against username %j: %s", (entry, username, allowed) => {
      expect(resolveAccess(configWith({ telegram: { allowFrom: [entry] } }), fromSender("42", username)).allowed).toBe(
        allowed,
      );
    });

    it.each([
      ["an owner", { owners: ["42"] }, { allowed: true, commands: true, owner: true }],
      ["a command user", { commandAllowFrom: ["42"] }, { allowed: false, commands: true, owner: false }],
      ["an allowlisted sender", { allowFrom: ["42"], owners: [] }, { allowed: true, commands: false, owner: false }],
      [
        "an allowlisted sender when another person owns the account",
        { allowFrom: ["42"], owners: ["7"] },
        { allowed: true, commands: false, owner: false },
      ],
      ["any sender under dmPolicy open", { dmPolicy: "open" }, { allowed: true, commands: false, owner: false }],
      ["an unlisted sender", {}, { allowed: false, commands: false, owner: false }],
    ])("grants %s no tier above its own", (_, telegram, expected) => {
      expect(tiers(resolveAccess(configWith({ telegram }), fromSender("42")))).toEqual(expected);
    });

    it.each([
      [
        "makes the explicit allowFrom entries owners when no owners list is set",
        { allowFrom: ["42", "*"] },
        "42",
        { allowed: true, commands: true, owner: true },
      ],
      ["never makes '*' an owner", { allowFrom: ["*"] }, "999", { allowed: true, commands: false, owner: false }],
      ["never makes 'tg:*' an owner", { allowFrom: ["tg:*"] }, "999", { allowed: true, commands: false, owner: false }],
      [
        "matches an @username entry as an owner",
        { allowFrom: ["@ada"] },
        "42",
        { allowed: true, commands: true, owner: true },
      ],
      [
        "reads owners: [] as nobody",
        { allowFrom: ["42"], owners: [] },
        "42",
        { allowed: true, commands: false, owner: false },
      ],
      [
        "keeps commandAllowFrom as commands only",
        { allowFrom: ["42"], commandAllowFrom: ["7"] },
        "7",
        { allowed: false, commands: true, owner: false },
      ],
    ])("%s", (_, telegram, sender, expected) => {
      expect(
        tiers(resolveAccess(configWith({ telegram }), fromSender(sender, sender === "42" ? "Ada" : undefined))),
      ).toEqual(expected);
    });

    it("reads an account's own lists over the channel's top level", () => {
      const config = configWith({
        telegram: { allowFrom: ["42"], accounts: { work: { allowFrom: ["7"], owners: ["7"] } } },
      });
      expect(resolveAccess(config, fromSender("42")).allowed).toBe(true);
      expect(resolveAccess(config, fromSender("7")).allowed).toBe(false);
      expect(tiers(resolveAccess(config, fromSender("7", undefined, { accountId: "work" })))).toEqual({
        allowed: true,
        commands: true,
        owner: true,
      });
      expect(resolveAccess(config, fromSender("42", undefined, { accountId: "Work" })).allowed).toBe(false);
    });

    it("uses the discord: prefix on Discord and the whatsapp: prefix on WhatsApp", () => {
      const config = configWith({
        discord: { allowFrom: ["discord:99", "tg:100"] },
        whatsapp: { owners: ["whatsapp:15551234567@s.whatsapp.net"] },
      });
      expect(resolveAccess(config, fromSender("99", undefined, { channel: "discord" })).allowed).toBe(true);
      expect(resolveAccess(config, fromSender("100", undefined, { channel: "discord" })).allowed).toBe(false);
      const wa = fromSender("15551234567@s.whatsapp.net", undefined, { channel: "whatsapp" });
      expect(tiers(resolveAccess(config, wa))).toEqual({ allowed: true, commands: true, owner: true });
    });
  });

  describe("groups", () => {
    it.each([
      ["allows a sender on groupAllowFrom", { groupAllowFrom: ["42"] }, "42", true],
      ["refuses a sender not on groupAllowFrom", { groupAllowFrom: ["42"] }, "43", false],
      ["refuses a DM-allowlisted sender not on groupAllowFrom", { allowFrom: ["43"], owners: [] }, "43", false],
      ["refuses everyone with an empty groupAllowFrom", { groupAllowFrom: [] }, "42", false],
      ["allows everyone when groupPolicy is open", { groupPolicy: "open" }, "999", true],
      ["allows an owner taken from allowFrom", { allowFrom: ["42"] }, "42", true],
      ["refuses even an owner when groupPolicy is disabled", { groupPolicy: "disabled", owners: ["42"] }, "42", false],
    ])("%s", (_, telegram, sender, allowed) => {
      const decision = resolveAccess(configWith({ telegram }), inGroup(sender));
      expect(decision.allowed).toBe(allowed);
      if (!allowed) expect(decision.reason).toBe("group-not-allowed");
    });

    it("refuses talk from a command user but lets their commands through", () => {
      const decision = resolveAccess(configWith({ telegram: { commandAllowFrom: ["42"] } }), inGroup("42"));
      expect(decision).toMatchObject({ allowed: false, commands: true, reason: "commands-only" });
    });

    it("refuses commands everywhere in a channel whose groupPolicy is disabled", () => {
      const decision = resolveAccess(
        configWith({ telegram: { groupPolicy: "disabled", owners: ["42"] } }),
        inGroup("42"),
      );
      expect(decision.commands).toBe(false);
    });

    it("lets a group's allowFrom replace groupAllowFrom in that group only", () => {
      const config = configWith({ telegram: { groupAllowFrom: ["42"], groups: { "-100": { allowFrom: ["7"] } } } });
      expect(resolveAccess(config, inGroup("7")).allowed).toBe(true);
      expect(resolveAccess(config, inGroup("42")).allowed).toBe(false);
      expect(resolveAccess(config, inGroup("42", { id: "-200" })).allowed).toBe(true);
      expect(resolveAccess(config, inGroup("7", { id: "-200" })).allowed).toBe(false);
    });

    it("applies the '*' group to groups without their own entry", () => {
      const config = configWith({
        telegram: { groups: { "*": { allowFrom: ["7"], requireMention: false }, "-100": { allowFrom: ["8"] } } },
      });
      expect(resolveAccess(config, inGroup("7", { id: "-300" }))).toMatchObject({ allowed: true, needsMention: false });
      expect(resolveAccess(config, inGroup("7")).allowed).toBe(false);
      expect(resolveAccess(config, inGroup("8"))).toMatchObject({ allowed: true, needsMention: true });
    });

    it("lets a forum topic's allowFrom and requireMention replace its group's", () => {
      const config = configWith({
        telegram: {
          groups: { "-100": { allowFrom: ["7"], topics: { "5": { allowFrom: ["8"], requireMention: false } } } },
        },
      });
      const topic = (sender: string, threadId: string) => inGroup(sender, { isForum: true, threadId });
      expect(resolveAccess(config, topic("8", "5"))).toMatchObject({ allowed: true, needsMention: false });
      expect(resolveAccess(config, topic("7", "5")).allowed).toBe(false);
      expect(resolveAccess(config, topic("7", "6"))).toMatchObject({ allowed: true, needsMention: true });
    });

    it.each([
      ["requires a mention by default", {}, false, true],
      ["lets a mention through", {}, true, false],
      [
        "needs no mention where requireMention is false",
        { groups: { "-100": { requireMention: false } } },
        false,
        false,
      ],
    ])("%s", (_, extra, wasMentioned, needsMention) => {
      const config = configWith({ telegram: { groupPolicy: "open", ...extra } });
      expect(resolveAccess(config, inGroup("42", {}, { wasMentioned })).needsMention).toBe(needsMention);
    });

    it("gates a WhatsApp group by its JID entry", () => {
      const config = configWith({
        whatsapp: { groupPolicy: "open", groups: { "123@g.us": { requireMention: false } } },
      });
      const wa = message({
        channel: "whatsapp",
        chat: { type: "group", id: "123@g.us" },
        sender: { id: "1@s.whatsapp.net" },
      });
      expect(resolveAccess(config, wa)).toMatchObject({ allowed: true, needsMention: false });
    });

    // BUG (reported): Discord guild rules are keyed by guild id, but access looks them up by the
    // message's channel id, so `guilds.<guildId>` never applies to a guild channel.
    it("BUG: applies a Discord guild's rules, and its channels' rules, to the guild's channels", () => {
      const config = configWith({
        discord: {
          groupPolicy: "open",
          guilds: { G1: { requireMention: false, channels: { C2: { requireMention: true } } } },
        },
      });
      const inChannel = (id: string) =>
        message({ channel: "discord", chat: { type: "channel", id, guildId: "G1" }, sender: { id: "u1" } });
      expect(resolveAccess(config, inChannel("C1")).needsMention).toBe(false);
      expect(resolveAccess(config, inChannel("C2")).needsMention).toBe(true);
    });
  });

  // Issue 11: with owners 100, allowFrom 200, commandAllowFrom 300 and groupAllowFrom 200, on every channel.
  describe.each(["telegram", "discord", "whatsapp"])("the three tiers on %s", (channel) => {
    const config = configWith({
      [channel]: { owners: ["100"], allowFrom: ["200"], commandAllowFrom: ["300"], groupAllowFrom: ["200"] },
    });
    const dmFrom = (id: string) => message({ channel, chat: { type: "direct", id }, sender: { id } });
    const groupFrom = (id: string) =>
      message({ channel, chat: { type: channel === "discord" ? "channel" : "group", id: "g1" }, sender: { id } });
    it.each([
      ["100", { allowed: true, commands: true, owner: true }],
      ["200", { allowed: true, commands: false, owner: false }],
      ["300", { allowed: false, commands: true, owner: false }],
      ["400", { allowed: false, commands: false, owner: false }],
    ])("gives %s in a DM and in a group exactly its tiers", (sender, expected) => {
      expect(tiers(resolveAccess(config, dmFrom(sender)))).toEqual(expected);
      expect(tiers(resolveAccess(config, groupFrom(sender)))).toEqual(expected);
    });
  });

  const GATEWAY_CLIENTS = { gatewayClients: true } as ChannelCapabilities;

  it("treats the gateway's own clients as the owner, whatever the channel's lists say", () => {
    const decision = resolveAccess(
      configWith({}),
      message({ channel: "webchat", chat: { type: "direct", id: "ui" }, sender: { id: "ui" } }),
      { capabilitiesOf: (channel) => (channel === "webchat" ? GATEWAY_CLIENTS : undefined) },
    );
    expect(decision).toEqual({ allowed: true, commands: true, owner: true, needsMention: false, gatewayClient: true });
    // The channel's name alone grants nothing: only the adapter's gatewayClients capability does.
    const byName = resolveAccess(
      configWith({}),
      message({ channel: "webchat", chat: { type: "direct", id: "ui" }, sender: { id: "ui" } }),
    );
    expect(byName.owner).toBe(false);
  });
});

describe("listIncludes", () => {
  it("matches ids and @usernames, case-insensitively", () => {
    const sender = fromSender("ABC", "Ada");
    expect(listIncludes(["abc"], sender)).toBe(true);
    expect(listIncludes(["@ADA"], sender)).toBe(true);
    expect(listIncludes(["Ada"], sender)).toBe(false);
  });

  it("allows nobody with an empty list and everybody with '*'", () => {
    expect(listIncludes([], fromSender("42"))).toBe(false);
    expect(listIncludes(["*"], fromSender("42"))).toBe(true);
    expect(listIncludes(["tg:*"], fromSender("42"))).toBe(true);
  });

  it("never matches a username entry for a sender without a username", () => {
    expect(listIncludes(["@"], fromSender("42"))).toBe(false);
  });
});

describe("resolveAccess under dmPolicy pairing", () => {
  const pairingConfig = configWith({
    telegram: { dmPolicy: "pairing", owners: ["42"], allowFrom: ["43"], commandAllowFrom: ["44"] },
  });
  const pairedIs = (ids: string[]) => (m: InboundMessage) => ids.includes(m.sender.id);

  it("marks a stranger's DM for a pairing code, with no talk, commands or ownership", () => {
    const decision = resolveAccess(pairingConfig, fromSender("222"), { paired: pairedIs([]) });
    expect(decision).toMatchObject({
      allowed: false,
      commands: false,
      owner: false,
      pairing: true,
      reason: "dm-pairing",
    });
  });

  it("lets an approved sender talk, but never run commands or own the account", () => {
    const decision = resolveAccess(pairingConfig, fromSender("222"), { paired: pairedIs(["222"]) });
    expect(tiers(decision)).toEqual({ allowed: true, commands: false, owner: false });
    expect(decision.pairing).toBeUndefined();
  });

  it("gives no code to people the config already knows: owners, allowFrom entries and command users", () => {
    for (const id of ["42", "43", "44"])
      expect(resolveAccess(pairingConfig, fromSender(id), { paired: pairedIs([]) }).pairing).toBeUndefined();
  });

  it("gives no code in groups, nor where dmPolicy is allowlist (the default), open or disabled", () => {
    expect(resolveAccess(pairingConfig, inGroup("222")).pairing).toBeUndefined();
    for (const dmPolicy of ["allowlist", undefined, "open", "disabled"])
      expect(
        resolveAccess(configWith({ telegram: { ...(dmPolicy && { dmPolicy }), owners: ["42"] } }), fromSender("222"))
          .pairing,
      ).toBeUndefined();
  });

  it("keeps an approved sender in when the account goes back to allowlist, and out when DMs are disabled", () => {
    const paired = { paired: pairedIs(["222"]) };
    expect(resolveAccess(configWith({ telegram: { owners: ["42"] } }), fromSender("222"), paired).allowed).toBe(true);
    expect(
      resolveAccess(configWith({ telegram: { dmPolicy: "disabled", owners: ["42"] } }), fromSender("222"), paired)
        .allowed,
    ).toBe(false);
  });
});
