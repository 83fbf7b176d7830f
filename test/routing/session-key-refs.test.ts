import { describe, expect, it } from "vitest";
import { SwitchboardError } from "../../src/errors.js";
import { type ConfigInput, parseConfig } from "../../src/config/index.js";
import { type RouteInput, resolveAgentRoute } from "../../src/routing/index.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { createSessionKeyContext } from "../../src/routing/session-key-context.js";
import {
  mainSessionKey,
  notASessionKey,
  requireSessionKey,
  sessionKeyForms,
  subagentSessionKey,
} from "../../src/routing/session-key-refs.js";

describe("mainSessionKey", () => {
  it("writes the canonical main key that the parser reads back as main", () => {
    expect(mainSessionKey("Ops", "Home")).toBe("agent:ops:home");
    expect(parseSessionKey(mainSessionKey("main", "main"))).toMatchObject({ kind: "main", agentId: "main" });
  });
});

describe("subagentSessionKey", () => {
  it("writes a sub-agent key that the parser reads back with its id", () => {
    const key = subagentSessionKey("ops", "ABC-1");
    expect(key).toBe("agent:ops:subagent:abc-1");
    expect(parseSessionKey(key)).toMatchObject({ kind: "subagent", agentId: "ops", id: "abc-1" });
  });
});

describe("sessionKeyForms", () => {
  it("gives an agent key with and without its agent prefix, and a global key as is", () => {
    expect(sessionKeyForms(parseSessionKey("agent:main:telegram:group:-100")!)).toEqual([
      "agent:main:telegram:group:-100",
      "telegram:group:-100",
    ]);
    expect(sessionKeyForms(parseSessionKey("global", { scope: "global" })!)).toEqual(["global"]);
  });
});

describe("notASessionKey", () => {
  it("names the rejected text, shows a key and carries INVALID_SESSION_KEY", () => {
    const err = notASessionKey("   ");
    expect(err).toBeInstanceOf(SwitchboardError);
    expect(err).toMatchObject({
      code: "INVALID_SESSION_KEY",
      message:
        '"   " is not a session key. Keys look like agent:main:telegram:group:-100123; sessions.list shows them.',
    });
  });
});

describe("requireSessionKey", () => {
  it.each([
    ["main", "agent:main:main"],
    ["agent:main:telegram:group:-100:topic:9", "agent:main:telegram:group:-100:topic:9"],
    ["agent:main:discord:channel:123:thread:456", "agent:main:discord:channel:123:thread:456"],
    ["agent:main:whatsapp:dm:+15551234567", "agent:main:whatsapp:dm:+15551234567"],
    ["cron:job-1", "agent:main:cron:job-1"],
    ["global", "global"],
  ])("reads %s, a shape the grammar produces", (raw, key) => {
    expect(requireSessionKey(raw).key).toBe(key);
  });

  it.each([
    ["a parent step", "agent:main:../../etc"],
    ["a parent step inside an id", "agent:main:telegram:dm:..%2f.."],
    ["a parent step in a legacy key", "../x"],
    ["a slash", "agent:main:telegram:dm:a/b"],
    ["a backslash", "agent:main:telegram:dm:a\\b"],
    ["a control character", "agent:main:telegram:dm:a\nb"],
    ["a shape no grammar produces", "agent:main:nonsense"],
    ["an unknown kind word", "agent:main:foo:bar:baz"],
    ["nothing after the agent", "agent:main:"],
  ])("refuses %s with the one not-a-session-key error", (_name, raw) => {
    expect(() => requireSessionKey(raw)).toThrow(
      expect.objectContaining({
        code: "INVALID_SESSION_KEY",
        message: expect.stringContaining("is not a session key"),
      }),
    );
  });
});

describe("requireSessionKey: platform ids (issue #30)", () => {
  it.each([
    ["a Telegram DM peer with a space", "agent:main:telegram:dm:12 34"],
    ["a Telegram DM peer that is a dash", "agent:main:telegram:dm:-"],
    ["a Telegram DM peer with a word after it", "agent:main:telegram:dm:111 x"],
    ["a Telegram group id that is markup", "agent:main:telegram:group:<script>"],
    ["a Telegram group id that is positive (groups are negative)", "agent:main:telegram:group:100123"],
    ["a Telegram topic that is not a number", "agent:main:telegram:group:-100123:topic:general"],
    ["a Telegram DM thread that is not a number", "agent:main:telegram:dm:111:thread:x"],
    ["a Discord channel that is not a snowflake", "agent:main:discord:channel:general"],
    ["a Discord DM peer that is a name", "agent:main:discord:dm:bob"],
    ["a WhatsApp DM peer that is not a number or JID", "agent:main:whatsapp:dm:bob"],
    ["a WhatsApp group that is not a @g.us JID", "agent:main:whatsapp:group:123"],
    ["a DM peer with a space on another channel", "agent:main:slack:dm:U1 U2"],
    ["a per-peer DM with markup", "agent:main:dm:<b>"],
    ["a tab in a group id", "agent:main:slack:group:C1\tC2"],
  ])("refuses %s with the one not-a-session-key error", (_name, raw) => {
    expect(() => createSessionKeyContext(parseConfig({}).config).parse(raw)).toThrow(
      expect.objectContaining({
        code: "INVALID_SESSION_KEY",
        message: `"${raw}" is not a session key. Keys look like agent:main:telegram:group:-100123; sessions.list shows them.`,
      }),
    );
  });

  const links = { "Alice Smith": ["telegram:111111111"], bob: ["discord:222222222222222222"] };
  // What routing makes of real platform ids, under each dmScope, identity links and a custom main key.
  const routed: Array<[string, ConfigInput, RouteInput]> = [
    ["a Telegram DM (main)", {}, { channel: "telegram", peer: { kind: "dm", id: "7550356539" } }],
    [
      "a Telegram DM, custom mainKey",
      { session: { mainKey: "Work" } },
      { channel: "telegram", peer: { kind: "dm", id: "7550356539" } },
    ],
    [
      "a Telegram DM thread, per-channel-peer",
      { session: { dmScope: "per-channel-peer" } },
      { channel: "telegram", peer: { kind: "dm", id: "7550356539" }, threadId: "12" },
    ],
    [
      "a Telegram DM, per-account-channel-peer",
      { session: { dmScope: "per-account-channel-peer" } },
      { channel: "telegram", accountId: "Tasks", peer: { kind: "dm", id: "7550356539" } },
    ],
    [
      "a Telegram forum topic",
      {},
      { channel: "telegram", peer: { kind: "group", id: "-1001234567890" }, topicId: "42" },
    ],
    ["a Telegram group", {}, { channel: "telegram", peer: { kind: "group", id: "-4012345678" } }],
    [
      "a linked Telegram DM (a name with a space), per-channel-peer",
      { session: { dmScope: "per-channel-peer", identityLinks: links } },
      { channel: "telegram", peer: { kind: "dm", id: "111111111" } },
    ],
    [
      "a linked Discord DM, per-peer",
      { session: { dmScope: "per-peer", identityLinks: links } },
      { channel: "discord", peer: { kind: "dm", id: "222222222222222222" } },
    ],
    [
      "a Discord guild channel",
      {},
      { channel: "discord", peer: { kind: "channel", id: "1180000000000000001" }, guildId: "1180000000000000000" },
    ],
    ["a Discord group DM", {}, { channel: "discord", peer: { kind: "group", id: "1180000000000000002" } }],
    [
      "a Discord DM, per-channel-peer",
      { session: { dmScope: "per-channel-peer" } },
      { channel: "discord", peer: { kind: "dm", id: "80351110224678912" } },
    ],
    [
      "a WhatsApp DM, per-channel-peer",
      { session: { dmScope: "per-channel-peer" } },
      { channel: "whatsapp", peer: { kind: "dm", id: "+15551234567" } },
    ],
    ["a WhatsApp group", {}, { channel: "whatsapp", peer: { kind: "group", id: "120363040000000000@g.us" } }],
    [
      "a WhatsApp legacy group",
      {},
      { channel: "whatsapp", peer: { kind: "group", id: "15551234567-1600000000@g.us" } },
    ],
    [
      "a Slack thread (a channel without rules)",
      {},
      { channel: "slack", peer: { kind: "group", id: "T1:C42" }, threadId: "1700000000.1234" },
    ],
  ];
  it.each(routed)("accepts the key routing makes for %s", (_name, raw, input) => {
    const config = parseConfig(raw).config;
    const route = resolveAgentRoute(config, input);
    expect(createSessionKeyContext(config).parse(route.sessionKey).parsed.key).toBe(route.sessionKey);
  });
});
