// Session-key helpers, the main alias, legacy keys and kinds (docs/session-keys.md). Where a rule is
// ours rather than obvious, the test name gives the reason in parentheses: platform ids keep their
// case, any key parses (bare keys belong to the default agent), kinds come from the parsed key.
//
// Not tested here: keys are never derived from a sender's `From` text (adapters hand routing a typed
// InboundMessage, see resolve-route.test.ts); merging legacy entries in the store and the store path
// belong to the store's tests; the rows the session tools show belong to the tools' tests.
import { describe, expect, it } from "vitest";
import {
  type KeyContext,
  type ParsedSessionKey,
  canonicalizeSessionKey,
  formatSessionKey,
  normalizeAgentId,
  parseSessionKey,
} from "../../src/routing/index.js";

/** One test vector: `id` and a behaviour in the present tense, plus why our expectation differs, if it does. */
interface Vector {
  does: string;
  changed?: string;
}

/** `[test name, row]` pairs for `it.each(...)("%s", ...)`: the name states the rule, why when it is ours, and the input in full. */
function named<T extends Vector & { raw: string }>(rows: readonly T[]): Array<[string, T]> {
  return rows.map((row) => [`${row.does}${row.changed ? ` (${row.changed})` : ""} (${JSON.stringify(row.raw)})`, row]);
}

const CASE = "platform ids keep their case";
const ANY_KEY = "any key parses: bare keys belong to the default agent";
const KINDS = "kind comes from the parsed key";

describe("normalizeAgentId", () => {
  it.each(
    named([
      { does: "lowercases a valid id", raw: "Main", expected: "main" },
      { does: "falls back to main for a blank id", raw: "  ", expected: "main" },
      {
        does: "replaces runs of invalid characters by '-' and trims dashes",
        raw: "My Agent!",
        expected: "my-agent",
      },
      { does: "replaces a dot by '-'", raw: "a.b", expected: "a-b" },
      { does: "falls back to main when nothing valid is left", raw: "---", expected: "main" },
      { does: "strips leading and trailing dashes", raw: "-ab-", expected: "ab" },
    ]),
  )("%s", (_name, { raw, expected }) => {
    expect(normalizeAgentId(raw)).toBe(expected);
  });
});

describe("formatSessionKey", () => {
  it("lowercases the agent id and the main key of a main session key", () => {
    expect(formatSessionKey({ kind: "main", agentId: "Ops", mainKey: "Work" })).toBe("agent:ops:work");
  });
});

interface ParseVector extends Vector {
  raw: string;
  ctx?: KeyContext;
  /** null: the key cannot be read */
  expected: Partial<ParsedSessionKey> | null;
  /** fields the parsed key does not have */
  absent?: string[];
}

const PARSE_VECTORS: ParseVector[] = [
  {
    changed: CASE,
    does: "reads an explicit key under scope global, trimming it and lowercasing only its structure",
    raw: " Agent:Main:Telegram:Group:ABC ",
    ctx: { scope: "global" },
    expected: {
      key: "agent:main:telegram:group:ABC",
      kind: "group",
      agentId: "main",
      channel: "telegram",
      peerId: "ABC",
    },
  },
  {
    changed: "agentId is normalised and the rest is typed",
    does: "reads an agent key with a mixed-case agent id",
    raw: "agent:Main:discord:group:dev",
    expected: {
      key: "agent:main:discord:group:dev",
      kind: "group",
      agentId: "main",
      channel: "discord",
      peerId: "dev",
      chatType: "group",
    },
  },
  { does: "rejects an agent key with an empty agent id", raw: "agent::main", expected: null },
  { does: "rejects an agent key without a rest", raw: "agent:main", expected: null },
  {
    changed: ANY_KEY,
    does: "reads bare main as the default agent's main session",
    raw: "main",
    expected: { key: "agent:main:main", kind: "main", agentId: "main" },
  },
  {
    changed: ANY_KEY,
    does: "reads a bare cron key as the default agent's cron session",
    raw: "cron:job",
    expected: { key: "agent:main:cron:job", kind: "cron", agentId: "main", id: "job" },
  },
  {
    does: "skips empty segments after the agent id",
    raw: "agent:ops::main",
    expected: { key: "agent:ops:main", kind: "main", agentId: "ops" },
  },
  {
    does: "reads a sub-agent key as kind subagent",
    raw: "agent:main:subagent:abc",
    expected: { kind: "subagent", agentId: "main", id: "abc" },
  },
  {
    does: "reads a bare upper-case sub-agent key as kind subagent",
    raw: "SUBAGENT:x",
    expected: { key: "agent:main:subagent:x", kind: "subagent", id: "x" },
  },
  {
    does: "reads a cron key whose id starts with subagent as kind cron",
    raw: "agent:main:cron:subagent:x",
    expected: { key: "agent:main:cron:subagent:x", kind: "cron", id: "subagent:x" },
  },
  {
    does: "splits a forum topic off the group id",
    raw: "agent:main:telegram:group:-100:topic:42",
    expected: { kind: "group", channel: "telegram", peerId: "-100", topicId: "42" },
    absent: ["threadId"],
  },
  {
    does: "gives a Discord thread channel key neither topic nor thread",
    raw: "agent:main:discord:channel:c1",
    expected: { kind: "channel", channel: "discord", peerId: "c1" },
    absent: ["topicId", "threadId"],
  },
  {
    changed: "not a known key shape: no thread split",
    does: "reads a thread suffix on an unknown shape as kind other",
    raw: "agent:main:x:topic:1:thread:2",
    expected: { key: "agent:main:x:topic:1:thread:2", kind: "other", rest: "x:topic:1:thread:2" },
    absent: ["topicId", "threadId"],
  },
  {
    does: "normalises the agent id of an agent key",
    raw: "agent:Ops:main",
    expected: { agentId: "ops" },
  },
  {
    does: "gives a bare native slash key the default agent and its channel",
    raw: "telegram:slash:111",
    expected: { key: "agent:main:telegram:slash:111", kind: "other", agentId: "main", channel: "telegram" },
  },
  {
    changed: CASE,
    does: "lowercases the structure of a bare group key but not its id",
    raw: "Discord:Group:ABC",
    expected: { key: "agent:main:discord:group:ABC", kind: "group", channel: "discord", peerId: "ABC" },
  },
  {
    does: "reads a bare group key",
    raw: "discord:group:dev",
    expected: { kind: "group", channel: "discord", peerId: "dev" },
  },
  {
    does: "reads an agent group key",
    raw: "agent:ops:discord:group:dev",
    expected: { kind: "group", agentId: "ops", channel: "discord", peerId: "dev" },
  },
  {
    changed: `${ANY_KEY}; not a group key`,
    does: "reads an unknown bare key as kind other",
    raw: "foo:bar",
    expected: { key: "agent:main:foo:bar", kind: "other" },
    absent: ["chatType", "channel"],
  },
  // The kind of a key is the parsed kind (the main alias `main` is a main session).
  { does: "classifies bare main as main", raw: "main", expected: { kind: "main", chatType: "direct" } },
  {
    changed: KINDS,
    does: "classifies the agent main key as main",
    raw: "agent:main:main",
    expected: { kind: "main" },
  },
  {
    does: "classifies a bare cron key as cron",
    raw: "cron:job-1",
    expected: { kind: "cron", id: "job-1" },
  },
  {
    changed: KINDS,
    does: "classifies an agent cron key as cron",
    raw: "agent:main:cron:job-1",
    expected: { kind: "cron" },
  },
  {
    does: "classifies a bare hook key as hook",
    raw: "hook:abc",
    expected: { kind: "hook", key: "agent:main:hook:abc" },
  },
  {
    does: "classifies node-<id> as node",
    raw: "node-1",
    expected: { kind: "node", id: "1", key: "agent:main:node-1" },
  },
  {
    does: "classifies node:<id> as node, written node-<id>",
    raw: "node:1",
    expected: { kind: "node", id: "1", key: "agent:main:node-1" },
  },
  {
    changed: "our kinds tell channel from group",
    does: "classifies a Discord channel key as channel",
    raw: "agent:main:discord:channel:c1",
    expected: { kind: "channel", chatType: "channel" },
  },
  {
    changed: KINDS,
    does: "classifies an agent sub-agent key as subagent",
    raw: "agent:main:subagent:x",
    expected: { kind: "subagent", id: "x" },
  },
  // The channel a key names (the session tools add `internal` and the lastChannel fallback).
  {
    does: "takes the channel of a bare group key",
    raw: "discord:group:dev",
    expected: { channel: "discord" },
  },
  {
    changed: "channel comes from the parsed key",
    does: "takes the channel of an agent group key",
    raw: "agent:main:discord:group:dev",
    expected: { channel: "discord" },
  },
  {
    does: "names no channel for a cron key",
    raw: "cron:job-1",
    expected: { kind: "cron" },
    absent: ["channel"],
  },
];

describe("parseSessionKey", () => {
  it.each(named(PARSE_VECTORS))("%s", (_name, { raw, ctx, expected, absent = [] }) => {
    const parsed = parseSessionKey(raw, ctx);
    if (expected === null) expect(parsed).toBeNull();
    else expect(parsed).toMatchObject(expected);
    for (const field of absent) expect(parsed).not.toHaveProperty(field);
  });
});

interface CanonicalVector extends Vector {
  raw: string;
  ctx?: KeyContext;
  expected: string | null;
}

const OPS_WORK: KeyContext = { defaultAgentId: "ops", mainKey: "work" };

const CANONICAL_VECTORS: CanonicalVector[] = [
  {
    does: "maps bare main to the default agent's configured main key",
    raw: "main",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    does: "maps the bare main key to the default agent's main session",
    raw: "work",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    does: "maps an agent main key to the configured main key",
    raw: "agent:ops:main",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    does: "gives a bare group key the default agent",
    raw: "discord:group:123",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:ops:discord:group:123",
  },
  {
    does: "keeps the agent of an agent key",
    raw: "agent:alpha:main",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:alpha:main",
  },
  {
    does: "maps main to global under scope global",
    raw: "main",
    ctx: { ...OPS_WORK, scope: "global" },
    expected: "global",
  },
  {
    does: "maps bare main to the default agent's main session",
    raw: "main",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:ops:main",
  },
  { does: "prefixes a bare E.164 key", raw: "+1555", expected: "agent:main:+1555" },
  { does: "prefixes another bare E.164 key", raw: "+1666", expected: "agent:main:+1666" },
  {
    changed: CASE,
    does: "prefixes a bare Slack channel key",
    raw: "slack:channel:C123",
    expected: "agent:main:slack:channel:C123",
  },
  {
    does: "maps a legacy group key without a JID to the unknown channel",
    raw: "group:abc",
    expected: "agent:main:unknown:group:abc",
  },
  { does: "prefixes a bare sub-agent key", raw: "subagent:xyz", expected: "agent:main:subagent:xyz" },
  {
    does: "prefixes a bare E.164 key under a custom main key",
    raw: "+1555",
    ctx: { mainKey: "work" },
    expected: "agent:main:+1555",
  },
  {
    does: "prefixes another bare E.164 key under a custom main key",
    raw: "+1666",
    ctx: { mainKey: "work" },
    expected: "agent:main:+1666",
  },
  { does: "maps legacy main onto the canonical main key", raw: "main", expected: "agent:main:main" },
  { does: "keeps the canonical main key", raw: "agent:main:main", expected: "agent:main:main" },
  {
    does: "maps the agent main key to a custom main key",
    raw: "agent:main:main",
    ctx: { mainKey: "work" },
    expected: "agent:main:work",
  },
  {
    does: "keeps the custom main key",
    raw: "agent:main:work",
    ctx: { mainKey: "work" },
    expected: "agent:main:work",
  },
  {
    changed: CASE,
    does: "keeps an agent Slack channel key as it is",
    raw: "agent:main:slack:channel:C123",
    expected: "agent:main:slack:channel:C123",
  },
  {
    does: "maps a legacy group JID to a WhatsApp group",
    raw: "group:123@g.us",
    expected: "agent:main:whatsapp:group:123@g.us",
  },
  {
    does: "maps a bare group JID to a WhatsApp group",
    raw: "456@g.us",
    expected: "agent:main:whatsapp:group:456@g.us",
  },
  {
    does: "maps a whatsapp-prefixed group JID to a WhatsApp group",
    raw: "whatsapp:789@g.us",
    expected: "agent:main:whatsapp:group:789@g.us",
  },
  { does: "lowercases a cron job id", raw: "cron:Job-1", expected: "agent:main:cron:job-1" },
  { does: "keeps global", raw: "global", expected: "global" },
  { does: "writes node:<id> as node-<id>", raw: "node:1", expected: "agent:main:node-1" },
  { does: "prefixes node-<id>", raw: "node-1", expected: "agent:main:node-1" },
];

describe("canonicalizeSessionKey", () => {
  it.each(named(CANONICAL_VECTORS))("%s", (_name, { raw, ctx, expected }) => {
    expect(canonicalizeSessionKey(raw, ctx)).toBe(expected);
  });
});
