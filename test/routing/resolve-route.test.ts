// Routing, threads and topics (docs/session-keys.md). Where a rule is ours rather than obvious, the
// test name gives the reason in parentheses. The default dmScope is `main` (docs/session-keys.md says
// what it shares). Not tested here: a sender's `From` text (routing never reads it) and Discord thread
// context beyond the keys themselves (the Discord adapter's tests).
import { describe, expect, it } from "vitest";
import { type ConfigInput, parseConfig } from "../../src/config/index.js";
import { ErrorCodes, isSwitchboardError } from "../../src/errors.js";
import {
  InboundMessageSchema,
  type ResolvedRoute,
  type RouteInput,
  type SessionKeyInput,
  buildSessionKey,
  resolveAgentRoute,
  resolveDefaultAgentId,
  routeInputFromInbound,
} from "../../src/routing/index.js";

/** One test vector: `id` and a behaviour in the present tense, plus why our expectation differs, if it does. */
interface Vector {
  does: string;
  changed?: string;
  note?: string;
}

/** `[test name, row]` pairs for `it.each(...)("%s", ...)`: the name states the rule, and why when it is ours. */
function named<T extends Vector>(rows: readonly T[]): Array<[string, T]> {
  return rows.map((row) => [
    `${row.does}${row.changed ? ` (${row.changed})` : ""}${row.note ? ` (${row.note})` : ""}`,
    row,
  ]);
}

function config(raw: ConfigInput = {}) {
  return parseConfig(raw).config;
}

const ALICE_LINKS = { alice: ["telegram:111111111", "discord:222222222222222222"] };

interface RouteVector extends Vector {
  config?: ConfigInput;
  input: RouteInput;
  expected: Partial<ResolvedRoute>;
}

const ROUTE_VECTORS: RouteVector[] = [
  {
    does: "puts a WhatsApp DM into the main session under the default config",
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+15551234567" } },
    expected: { agentId: "main", accountId: "default", sessionKey: "agent:main:main", matchedBy: "default" },
  },
  {
    does: "keys a DM by sender alone under per-peer",
    config: { session: { dmScope: "per-peer" } },
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+15551234567" } },
    expected: { sessionKey: "agent:main:dm:+15551234567" },
  },
  {
    does: "keys a DM by channel and sender under per-channel-peer",
    config: { session: { dmScope: "per-channel-peer" } },
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+15551234567" } },
    expected: { sessionKey: "agent:main:whatsapp:dm:+15551234567" },
  },
  {
    does: "replaces a linked Telegram sender by the canonical name under per-peer",
    config: { session: { dmScope: "per-peer", identityLinks: ALICE_LINKS } },
    input: { channel: "telegram", peer: { kind: "dm", id: "111111111" } },
    expected: { sessionKey: "agent:main:dm:alice" },
  },
  {
    does: "replaces a linked Discord sender by the canonical name under per-channel-peer",
    config: { session: { dmScope: "per-channel-peer", identityLinks: ALICE_LINKS } },
    input: { channel: "discord", peer: { kind: "dm", id: "222222222222222222" } },
    expected: { sessionKey: "agent:main:discord:dm:alice" },
  },
  {
    does: "puts the account into the key under per-account-channel-peer",
    config: { session: { dmScope: "per-account-channel-peer" } },
    input: { channel: "telegram", accountId: "tasks", peer: { kind: "dm", id: "7550356539" } },
    expected: { sessionKey: "agent:main:telegram:tasks:dm:7550356539" },
  },
  {
    does: "writes the default account when none is given under per-account-channel-peer",
    config: { session: { dmScope: "per-account-channel-peer" } },
    input: { channel: "telegram", peer: { kind: "dm", id: "7550356539" } },
    expected: { accountId: "default", sessionKey: "agent:main:telegram:default:dm:7550356539" },
  },
  {
    does: "prefers a peer binding over an account binding",
    config: {
      bindings: [
        { agentId: "a", match: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } } },
        { agentId: "b", match: { channel: "whatsapp", accountId: "biz" } },
      ],
    },
    input: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } },
    expected: { agentId: "a", sessionKey: "agent:a:main", matchedBy: "binding.peer", bindingIndex: 0 },
  },
  {
    does: "prefers a channel peer binding over a guild binding",
    config: {
      bindings: [
        { agentId: "chan", match: { channel: "discord", accountId: "default", peer: { kind: "channel", id: "c1" } } },
        { agentId: "guild", match: { channel: "discord", accountId: "default", guildId: "g1" } },
      ],
    },
    input: { channel: "discord", accountId: "default", peer: { kind: "channel", id: "c1" }, guildId: "g1" },
    expected: {
      agentId: "chan",
      sessionKey: "agent:chan:discord:channel:c1",
      matchedBy: "binding.peer",
      bindingIndex: 0,
    },
  },
  {
    does: "prefers a guild binding over an account binding",
    config: {
      bindings: [
        { agentId: "guild", match: { channel: "discord", guildId: "g1" } },
        { agentId: "acct", match: { channel: "discord", accountId: "default" } },
      ],
    },
    input: { channel: "discord", accountId: "default", peer: { kind: "channel", id: "c1" }, guildId: "g1" },
    expected: {
      agentId: "guild",
      sessionKey: "agent:guild:discord:channel:c1",
      matchedBy: "binding.guild",
      bindingIndex: 0,
    },
  },
  {
    does: "matches a binding without accountId on the default account and normalises the bound agent id",
    config: { bindings: [{ agentId: "defaultAcct", match: { channel: "whatsapp" } }] },
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+1000" } },
    expected: { agentId: "defaultacct", accountId: "default", matchedBy: "binding.account", bindingIndex: 0 },
  },
  {
    does: "does not match a binding without accountId on another account",
    config: { bindings: [{ agentId: "defaultAcct", match: { channel: "whatsapp" } }] },
    input: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } },
    expected: { agentId: "main", accountId: "biz", matchedBy: "default" },
  },
  {
    does: "matches a channel-wide binding with accountId * on any account",
    config: { bindings: [{ agentId: "any", match: { channel: "whatsapp", accountId: "*" } }] },
    input: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } },
    expected: { agentId: "any", matchedBy: "binding.channel", bindingIndex: 0 },
  },
  {
    does: "routes unclaimed messages to the agent marked default",
    config: { agents: { list: [{ id: "home", default: true }] } },
    input: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } },
    expected: {
      agentId: "home",
      sessionKey: "agent:home:main",
      mainSessionKey: "agent:home:main",
      matchedBy: "default",
    },
  },
  {
    does: "ignores identity links when dmScope is main",
    config: { session: { dmScope: "main", identityLinks: ALICE_LINKS } },
    input: { channel: "telegram", peer: { kind: "dm", id: "111111111" } },
    expected: { sessionKey: "agent:main:main" },
  },
  {
    does: "compares the channel prefix of a link case-insensitively and lowercases the canonical name",
    config: { session: { dmScope: "per-peer", identityLinks: { Alice: ["Telegram:111"] } } },
    input: { channel: "TELEGRAM", peer: { kind: "dm", id: "111" } },
    expected: { channel: "telegram", sessionKey: "agent:main:dm:alice" },
  },
  {
    does: "matches an unprefixed linked id on any channel",
    config: { session: { dmScope: "per-peer", identityLinks: { bob: ["555"] } } },
    input: { channel: "discord", peer: { kind: "dm", id: "555" } },
    expected: { sessionKey: "agent:main:dm:bob" },
  },
  {
    does: "does not resolve channel aliases in link prefixes",
    config: { session: { dmScope: "per-peer", identityLinks: { bob: ["tg:555"] } } },
    input: { channel: "telegram", peer: { kind: "dm", id: "555" } },
    expected: { sessionKey: "agent:main:dm:555" },
  },
  {
    changed: "platform ids keep their case",
    does: "keeps the case of a DM sender id",
    config: { session: { dmScope: "per-peer" } },
    input: { channel: "slack", peer: { kind: "dm", id: "U123ABC" } },
    expected: { sessionKey: "agent:main:dm:U123ABC" },
  },
  {
    does: "keys a blank DM sender id as unknown",
    config: { session: { dmScope: "per-peer" } },
    input: { channel: "slack", peer: { kind: "dm", id: "  " } },
    expected: { sessionKey: "agent:main:dm:unknown" },
  },
  {
    does: "puts a message without a peer into the main session",
    config: { session: { dmScope: "per-peer" } },
    input: { channel: "slack" },
    expected: { sessionKey: "agent:main:main" },
  },
  {
    does: "lowercases the channel and keys a group by its id",
    input: { channel: "Telegram", peer: { kind: "group", id: "-1001234567890" } },
    expected: { channel: "telegram", sessionKey: "agent:main:telegram:group:-1001234567890" },
  },
  {
    changed: "platform ids keep their case",
    does: "keeps the case of a channel id",
    input: { channel: "slack", peer: { kind: "channel", id: "C123ABC" } },
    expected: { sessionKey: "agent:main:slack:channel:C123ABC" },
  },
  {
    changed: "the router honours session.mainKey",
    does: "uses the configured main key for the main session",
    config: { session: { mainKey: "work" } },
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+1" } },
    expected: { sessionKey: "agent:main:work", mainSessionKey: "agent:main:work" },
  },
  {
    changed: "account ids are normalised in binding matches",
    does: "matches a binding whose accountId differs only in case",
    config: { bindings: [{ agentId: "biz", match: { channel: "whatsapp", accountId: "Biz" } }] },
    input: { channel: "whatsapp", accountId: "biz", peer: { kind: "dm", id: "+1000" } },
    expected: { agentId: "biz", accountId: "biz", matchedBy: "binding.account", bindingIndex: 0 },
  },
  {
    changed: "route.accountId is normalised too",
    does: "lowercases the account id in the route and in the key",
    config: { session: { dmScope: "per-account-channel-peer" } },
    input: { channel: "telegram", accountId: "Tasks", peer: { kind: "dm", id: "9" } },
    expected: { accountId: "tasks", sessionKey: "agent:main:telegram:tasks:dm:9" },
  },
  {
    changed: "platform ids keep their case",
    does: "matches a Slack team binding",
    config: { bindings: [{ agentId: "support", match: { channel: "slack", teamId: "T123" } }] },
    input: { channel: "slack", peer: { kind: "channel", id: "C1" }, teamId: "T123" },
    expected: {
      agentId: "support",
      sessionKey: "agent:support:slack:channel:C1",
      matchedBy: "binding.team",
      bindingIndex: 0,
    },
  },
  {
    changed: "platform ids keep their case",
    does: "compares binding peer ids exactly, case included",
    config: { bindings: [{ agentId: "lower", match: { channel: "slack", peer: { kind: "channel", id: "c1" } } }] },
    input: { channel: "slack", peer: { kind: "channel", id: "C1" } },
    expected: { agentId: "main", sessionKey: "agent:main:slack:channel:C1", matchedBy: "default" },
  },
  {
    does: "matches a channel-prefixed link to a WhatsApp E.164 sender",
    config: { session: { dmScope: "per-peer", identityLinks: { alice: ["whatsapp:+41796666864"] } } },
    input: { channel: "whatsapp", peer: { kind: "dm", id: "+41796666864" } },
    expected: { sessionKey: "agent:main:dm:alice" },
  },
  {
    changed: "platform ids keep their case",
    does: "keys a Discord group DM as a group",
    input: { channel: "discord", peer: { kind: "group", id: "GDM1" } },
    expected: { sessionKey: "agent:main:discord:group:GDM1" },
  },
  {
    does: "keys a WhatsApp group by its JID",
    input: { channel: "whatsapp", peer: { kind: "group", id: "120363406150318674@g.us" } },
    expected: { sessionKey: "agent:main:whatsapp:group:120363406150318674@g.us" },
  },
];

describe("resolveAgentRoute", () => {
  it.each(named(ROUTE_VECTORS))("%s", (_name, { config: raw, input, expected }) => {
    expect(resolveAgentRoute(config(raw), input)).toMatchObject(expected);
  });

  it("keeps the rule precedence and config order whatever the mix of bindings on a channel", () => {
    const mixed = config({
      agents: {
        list: [
          { id: "wide" },
          { id: "acct" },
          { id: "guild" },
          { id: "peer-other-account" },
          { id: "peer" },
          { id: "peer2" },
        ],
      },
      bindings: [
        { agentId: "wide", match: { channel: "discord", accountId: "*" } },
        { agentId: "acct", match: { channel: "discord", accountId: "default" } },
        { agentId: "guild", match: { channel: "discord", guildId: "g1", peer: { kind: "channel", id: "c9" } } },
        {
          agentId: "peer-other-account",
          match: { channel: "discord", accountId: "biz", peer: { kind: "channel", id: "c1" } },
        },
        { agentId: "peer", match: { channel: "discord", peer: { kind: "channel", id: "c1" } } },
        { agentId: "peer2", match: { channel: "discord", peer: { kind: "channel", id: "c1" } } },
      ],
    });
    const route = (input: Partial<RouteInput>) => resolveAgentRoute(mixed, { channel: "discord", ...input });
    expect(route({ peer: { kind: "channel", id: "c1" }, guildId: "g1" })).toMatchObject({
      agentId: "peer",
      matchedBy: "binding.peer",
      bindingIndex: 4,
    });
    expect(route({ accountId: "biz", peer: { kind: "channel", id: "c1" } })).toMatchObject({
      agentId: "peer-other-account",
      bindingIndex: 3,
    });
    expect(route({ peer: { kind: "channel", id: "c2" }, guildId: "g1" })).toMatchObject({
      agentId: "guild",
      matchedBy: "binding.guild",
      bindingIndex: 2,
    });
    expect(route({ peer: { kind: "channel", id: "c2" } })).toMatchObject({
      agentId: "acct",
      matchedBy: "binding.account",
      bindingIndex: 1,
    });
    expect(route({ accountId: "biz", peer: { kind: "group", id: "c1" } })).toMatchObject({
      agentId: "wide",
      matchedBy: "binding.channel",
      bindingIndex: 0,
    });
    expect(resolveAgentRoute(mixed, { channel: "telegram", peer: { kind: "dm", id: "1" } })).toMatchObject({
      agentId: "wide",
      matchedBy: "default",
    });
  });

  it("config validation rejects a binding to an unlisted agent: : reports the binding's agentId", () => {
    let error: unknown;
    try {
      parseConfig({
        agents: { list: [{ id: "home", default: true }] },
        bindings: [{ agentId: "ghost", match: { channel: "whatsapp" } }],
      });
    } catch (err) {
      error = err;
    }
    expect(isSwitchboardError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect(isSwitchboardError(error) && error.details).toEqual([expect.stringContaining("bindings[0].agentId")]);
  });

  it("falls back to the default agent for a binding to an unlisted agent in a config built without validation", () => {
    const valid = config({ session: { dmScope: "main" }, agents: { list: [{ id: "home", default: true }] } });
    const unchecked = { ...valid, bindings: [{ agentId: "ghost", match: { channel: "whatsapp" } }] };
    expect(resolveAgentRoute(unchecked, { channel: "whatsapp", peer: { kind: "dm", id: "+1" } })).toMatchObject({
      agentId: "home",
      sessionKey: "agent:home:main",
      matchedBy: "binding.account",
    });
  });

  it("routes a thread under a guild binding to the thread's own channel key, and its parent to the parent's", () => {
    const cfg = config({ bindings: [{ agentId: "support", match: { channel: "discord", guildId: "g1" } }] });
    const thread = resolveAgentRoute(cfg, { channel: "discord", peer: { kind: "channel", id: "t1" }, guildId: "g1" });
    const parent = resolveAgentRoute(cfg, { channel: "discord", peer: { kind: "channel", id: "p1" }, guildId: "g1" });
    expect(thread).toMatchObject({
      agentId: "support",
      sessionKey: "agent:support:discord:channel:t1",
      matchedBy: "binding.guild",
    });
    expect(parent.sessionKey).toBe("agent:support:discord:channel:p1");
  });
});

describe("resolveDefaultAgentId", () => {
  it.each(
    named([
      {
        does: "picks the agent marked default",
        list: [{ id: "work" }, { id: "home", default: true }],
        expected: "home",
      },
      {
        does: "picks the first agent when none is marked default",
        list: [{ id: "work" }, { id: "home" }],
        expected: "work",
      },
      { does: "picks main when agents.list is empty", list: [], expected: "main" },
    ]),
  )("%s", (_name, { list, expected }) => {
    expect(resolveDefaultAgentId(config({ agents: { list } }))).toBe(expected);
  });
});

const TELEGRAM_GROUP = -1001234567890;

interface InboundVector extends Vector {
  config?: ConfigInput;
  message: unknown;
  expected: { sessionKey: string; agentId?: string; accountId?: string; matchedBy?: string };
  /** the DM thread / forum topic the route carries (the platform's thread or topic id); undefined: none */
  threadId?: string;
  topicId?: string;
}

const INBOUND_VECTORS: InboundVector[] = [
  {
    does: "appends a Telegram DM thread to the main session key",
    message: { channel: "telegram", chat: { type: "direct", id: 1234, threadId: 42 }, sender: { id: 1234 } },
    expected: { sessionKey: "agent:main:main:thread:42" },
    threadId: "42",
  },
  {
    does: "keys a Telegram DM without a thread as the main session",
    message: { channel: "telegram", chat: { type: "direct", id: 1234 }, sender: { id: 1234 } },
    expected: { sessionKey: "agent:main:main" },
  },
  {
    does: "ignores a reply thread in a Telegram group that is not a forum",
    message: { channel: "telegram", chat: { type: "group", id: TELEGRAM_GROUP, threadId: 42 }, sender: { id: 1 } },
    expected: { sessionKey: "agent:main:telegram:group:-1001234567890" },
  },
  {
    does: "keys a Telegram forum topic as its own session",
    message: {
      channel: "telegram",
      chat: { type: "group", id: TELEGRAM_GROUP, threadId: 99, isForum: true },
      sender: { id: 1 },
    },
    expected: { sessionKey: "agent:main:telegram:group:-1001234567890:topic:99" },
    topicId: "99",
  },
  {
    does: "keys a Telegram forum message without a topic as the General topic 1",
    message: { channel: "telegram", chat: { type: "group", id: TELEGRAM_GROUP, isForum: true }, sender: { id: 1 } },
    expected: { sessionKey: "agent:main:telegram:group:-1001234567890:topic:1" },
    topicId: "1",
  },
  {
    // Only the target key: native command plumbing (CommandTargetSessionKey) comes with the adapters, issues 7+.
    does: "gives a native command in a Telegram DM thread the thread's key as target",
    message: {
      channel: "telegram",
      chat: { type: "direct", id: 12345, threadId: 99 },
      sender: { id: 12345 },
      text: "/status",
    },
    expected: { sessionKey: "agent:main:main:thread:99" },
    threadId: "99",
  },
  {
    does: "routes a DM to the bot account's bound agent",
    config: { bindings: [{ agentId: "opie", match: { channel: "telegram", accountId: "opie" } }] },
    message: { channel: "telegram", accountId: "opie", chat: { type: "direct", id: 1234 }, sender: { id: 1234 } },
    expected: { sessionKey: "agent:opie:main", agentId: "opie", accountId: "opie", matchedBy: "binding.account" },
  },
  {
    changed: "session.mainKey applies to the main alias",
    does: "keeps a DM thread's suffix on the main key of the bound agent under session.mainKey",
    config: {
      session: { mainKey: "work" },
      bindings: [{ agentId: "opie", match: { channel: "telegram", accountId: "opie" } }],
    },
    message: {
      channel: "telegram",
      accountId: "opie",
      chat: { type: "direct", id: 1234, threadId: 7 },
      sender: { id: 1234 },
    },
    expected: { sessionKey: "agent:opie:work:thread:7", agentId: "opie", matchedBy: "binding.account" },
    threadId: "7",
  },
  {
    does: "appends a Telegram DM thread to a per-channel-peer key",
    config: { session: { dmScope: "per-channel-peer" } },
    message: { channel: "telegram", chat: { type: "direct", id: 1234, threadId: 7 }, sender: { id: 1234 } },
    expected: { sessionKey: "agent:main:telegram:dm:1234:thread:7" },
    threadId: "7",
  },
  {
    does: "keys a Discord guild channel by its channel id",
    message: { channel: "discord", chat: { type: "channel", id: "c1", guildId: "g1" }, sender: { id: "u1" } },
    expected: { sessionKey: "agent:main:discord:channel:c1" },
  },
];

describe("routeInputFromInbound", () => {
  it.each(named(INBOUND_VECTORS))("%s", (_name, { config: raw, message, expected, threadId, topicId }) => {
    const input = routeInputFromInbound(InboundMessageSchema.parse(message));
    const route = resolveAgentRoute(config(raw), input);
    expect(route).toMatchObject(expected);
    expect(input.threadId).toBe(threadId);
    expect(input.topicId).toBe(topicId);
    const parsed = route.parsed as { threadId?: string; topicId?: string };
    expect({ threadId: parsed.threadId, topicId: parsed.topicId }).toEqual({ threadId, topicId });
  });

  it("gives a non-forum Telegram group the same key with and without a thread id", () => {
    const keyOf = (chat: object) =>
      resolveAgentRoute(
        config(),
        routeInputFromInbound(InboundMessageSchema.parse({ channel: "telegram", chat, sender: { id: 1 } })),
      ).sessionKey;
    expect(keyOf({ type: "group", id: TELEGRAM_GROUP, threadId: 42 })).toBe(
      keyOf({ type: "group", id: TELEGRAM_GROUP }),
    );
  });
});

interface BuildVector extends Vector {
  input: Partial<SessionKeyInput>;
  expected: string;
}

const BUILD_VECTORS: BuildVector[] = [
  {
    does: "keys a created Discord thread by its own channel id, without a thread suffix",
    input: { agentId: "agent", channel: "discord", peer: { kind: "channel", id: "thread" } },
    expected: "agent:agent:discord:channel:thread",
  },
  {
    does: "keys the parent of a created Discord thread by the parent channel id",
    input: { agentId: "agent", channel: "discord", peer: { kind: "channel", id: "parent" } },
    expected: "agent:agent:discord:channel:parent",
  },
  {
    does: "appends a Slack thread id with its dots",
    input: { agentId: "main", channel: "slack", peer: { kind: "channel", id: "c1" }, threadId: "1712345.6789" },
    expected: "agent:main:slack:channel:c1:thread:1712345.6789",
  },
  {
    changed: "platform ids keep their case",
    does: "keeps the case of a thread id",
    input: { agentId: "main", channel: "telegram", dmScope: "main", threadId: "ABC" },
    expected: "agent:main:main:thread:ABC",
  },
  {
    does: "leaves the key without suffix for a blank thread id",
    input: { agentId: "main", channel: "telegram", dmScope: "main", threadId: "  " },
    expected: "agent:main:main",
  },
];

describe("buildSessionKey", () => {
  it.each(named(BUILD_VECTORS))("%s", (_name, { input, expected }) => {
    expect(buildSessionKey({ agentId: "main", channel: "unknown", dmScope: "per-channel-peer", ...input }).key).toBe(
      expected,
    );
  });
});
