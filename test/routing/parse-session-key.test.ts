// Test vectors V069-V091 of the system we re-implement (key helpers, main alias, legacy keys, kinds),
// plus the one delivery-context vector that is about keys rather than `From` (docs/session-keys.md).
//
// Rows marked "changed" follow our decisions where they differ from the anchor (the reason is in
// the test name): platform ids keep their case, any key parses (bare keys belong to the default
// agent), kinds come from the parsed key.
//
// Left out:
// - V050-V059, V061-V068: derive a key from `From`/`ChatType`/`Provider`; we never derive keys from
//   `From` (adapters hand routing a typed InboundMessage, see resolve-route.test.ts).
// - V082-V085: the store merge (newest updatedAt wins, a direct entry copied to the main key, bare
//   keys removed) belongs to the store issue; only the key mapping of each legacy key is tested here.
// - V079 (store target agent), V080 (storeKeys and the store path): store, same issue; keys only here.
// - V088 (gateway row kind), V091's `internal` channel for cron/hook/node and `lastChannel`
//   fallback, V092-V097 (sessions_list rows, announce targets, hook payloads): tools, issue 5.
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
  id: string;
  does: string;
  changed?: string;
}

/** `[test name, row]` pairs for `it.each(...)("%s", ...)`: the name shows the id, any change and the input in full. */
function named<T extends Vector & { raw: string }>(rows: readonly T[]): Array<[string, T]> {
  return rows.map((row) => [
    `${row.id}${row.changed ? ` (changed: ${row.changed})` : ""}: ${row.does} (${JSON.stringify(row.raw)})`,
    row,
  ]);
}

const CASE = "platform ids keep their case";
const ANY_KEY = "any key parses: bare keys belong to the default agent";
const KINDS = "kind comes from the parsed key";

describe("normalizeAgentId", () => {
  it.each(
    named([
      { id: "V069", does: "lowercases a valid id", raw: "Main", expected: "main" },
      { id: "V069", does: "falls back to main for a blank id", raw: "  ", expected: "main" },
      {
        id: "V069",
        does: "replaces runs of invalid characters by '-' and trims dashes",
        raw: "My Agent!",
        expected: "my-agent",
      },
      { id: "V069", does: "replaces a dot by '-'", raw: "a.b", expected: "a-b" },
      { id: "V069", does: "falls back to main when nothing valid is left", raw: "---", expected: "main" },
      { id: "V069", does: "strips leading and trailing dashes", raw: "-ab-", expected: "ab" },
    ]),
  )("%s", (_name, { raw, expected }) => {
    expect(normalizeAgentId(raw)).toBe(expected);
  });
});

describe("formatSessionKey", () => {
  it("V070: lowercases the agent id and the main key of a main session key", () => {
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
    id: "V060",
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
    id: "V071",
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
  { id: "V072", does: "rejects an agent key with an empty agent id", raw: "agent::main", expected: null },
  { id: "V072", does: "rejects an agent key without a rest", raw: "agent:main", expected: null },
  {
    id: "V072",
    changed: ANY_KEY,
    does: "reads bare main as the default agent's main session",
    raw: "main",
    expected: { key: "agent:main:main", kind: "main", agentId: "main" },
  },
  {
    id: "V072",
    changed: ANY_KEY,
    does: "reads a bare cron key as the default agent's cron session",
    raw: "cron:job",
    expected: { key: "agent:main:cron:job", kind: "cron", agentId: "main", id: "job" },
  },
  {
    id: "V073",
    does: "skips empty segments after the agent id",
    raw: "agent:ops::main",
    expected: { key: "agent:ops:main", kind: "main", agentId: "ops" },
  },
  {
    id: "V074",
    does: "reads a sub-agent key as kind subagent",
    raw: "agent:main:subagent:abc",
    expected: { kind: "subagent", agentId: "main", id: "abc" },
  },
  {
    id: "V074",
    does: "reads a bare upper-case sub-agent key as kind subagent",
    raw: "SUBAGENT:x",
    expected: { key: "agent:main:subagent:x", kind: "subagent", id: "x" },
  },
  {
    id: "V074",
    does: "reads a cron key whose id starts with subagent as kind cron",
    raw: "agent:main:cron:subagent:x",
    expected: { key: "agent:main:cron:subagent:x", kind: "cron", id: "subagent:x" },
  },
  {
    id: "V075",
    does: "splits a forum topic off the group id",
    raw: "agent:main:telegram:group:-100:topic:42",
    expected: { kind: "group", channel: "telegram", peerId: "-100", topicId: "42" },
    absent: ["threadId"],
  },
  {
    id: "V075",
    does: "gives a Discord thread channel key neither topic nor thread",
    raw: "agent:main:discord:channel:c1",
    expected: { kind: "channel", channel: "discord", peerId: "c1" },
    absent: ["topicId", "threadId"],
  },
  {
    id: "V075",
    changed: "not a known key shape: no thread split",
    does: "reads a thread suffix on an unknown shape as kind other",
    raw: "agent:main:x:topic:1:thread:2",
    expected: { key: "agent:main:x:topic:1:thread:2", kind: "other", rest: "x:topic:1:thread:2" },
    absent: ["topicId", "threadId"],
  },
  {
    id: "V076",
    does: "normalises the agent id of an agent key",
    raw: "agent:Ops:main",
    expected: { agentId: "ops" },
  },
  {
    id: "V076",
    does: "gives a bare native slash key the default agent and its channel",
    raw: "telegram:slash:111",
    expected: { key: "agent:main:telegram:slash:111", kind: "other", agentId: "main", channel: "telegram" },
  },
  {
    id: "V081",
    changed: CASE,
    does: "lowercases the structure of a bare group key but not its id",
    raw: "Discord:Group:ABC",
    expected: { key: "agent:main:discord:group:ABC", kind: "group", channel: "discord", peerId: "ABC" },
  },
  {
    id: "V089",
    does: "reads a bare group key",
    raw: "discord:group:dev",
    expected: { kind: "group", channel: "discord", peerId: "dev" },
  },
  {
    id: "V089",
    does: "reads an agent group key",
    raw: "agent:ops:discord:group:dev",
    expected: { kind: "group", agentId: "ops", channel: "discord", peerId: "dev" },
  },
  {
    id: "V089",
    changed: `${ANY_KEY}; not a group key`,
    does: "reads an unknown bare key as kind other",
    raw: "foo:bar",
    expected: { key: "agent:main:foo:bar", kind: "other" },
    absent: ["chatType", "channel"],
  },
  // V090: the tool kind of the anchor, here the parsed kind (main alias `main`).
  { id: "V090", does: "classifies bare main as main", raw: "main", expected: { kind: "main", chatType: "direct" } },
  {
    id: "V090",
    changed: KINDS,
    does: "classifies the agent main key as main",
    raw: "agent:main:main",
    expected: { kind: "main" },
  },
  {
    id: "V090",
    does: "classifies a bare cron key as cron",
    raw: "cron:job-1",
    expected: { kind: "cron", id: "job-1" },
  },
  {
    id: "V090",
    changed: KINDS,
    does: "classifies an agent cron key as cron",
    raw: "agent:main:cron:job-1",
    expected: { kind: "cron" },
  },
  {
    id: "V090",
    does: "classifies a bare hook key as hook",
    raw: "hook:abc",
    expected: { kind: "hook", key: "agent:main:hook:abc" },
  },
  {
    id: "V090",
    does: "classifies node-<id> as node",
    raw: "node-1",
    expected: { kind: "node", id: "1", key: "agent:main:node-1" },
  },
  {
    id: "V090",
    does: "classifies node:<id> as node, written node-<id>",
    raw: "node:1",
    expected: { kind: "node", id: "1", key: "agent:main:node-1" },
  },
  {
    id: "V090",
    changed: "our kinds tell channel from group",
    does: "classifies a Discord channel key as channel",
    raw: "agent:main:discord:channel:c1",
    expected: { kind: "channel", chatType: "channel" },
  },
  {
    id: "V090",
    changed: KINDS,
    does: "classifies an agent sub-agent key as subagent",
    raw: "agent:main:subagent:x",
    expected: { kind: "subagent", id: "x" },
  },
  // V091: the channel a key names (the tools add `internal` and the lastChannel fallback, issue 5).
  {
    id: "V091",
    does: "takes the channel of a bare group key",
    raw: "discord:group:dev",
    expected: { channel: "discord" },
  },
  {
    id: "V091",
    changed: "channel comes from the parsed key",
    does: "takes the channel of an agent group key",
    raw: "agent:main:discord:group:dev",
    expected: { channel: "discord" },
  },
  {
    id: "V091",
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
    id: "V077",
    does: "maps bare main to the default agent's configured main key",
    raw: "main",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    id: "V077",
    does: "maps the bare main key to the default agent's main session",
    raw: "work",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    id: "V077",
    does: "maps an agent main key to the configured main key",
    raw: "agent:ops:main",
    ctx: OPS_WORK,
    expected: "agent:ops:work",
  },
  {
    id: "V078",
    does: "gives a bare group key the default agent",
    raw: "discord:group:123",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:ops:discord:group:123",
  },
  {
    id: "V078",
    does: "keeps the agent of an agent key",
    raw: "agent:alpha:main",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:alpha:main",
  },
  {
    id: "V079",
    does: "maps main to global under scope global",
    raw: "main",
    ctx: { ...OPS_WORK, scope: "global" },
    expected: "global",
  },
  {
    id: "V080",
    does: "maps bare main to the default agent's main session",
    raw: "main",
    ctx: { defaultAgentId: "ops" },
    expected: "agent:ops:main",
  },
  { id: "V082", does: "prefixes a bare E.164 key", raw: "+1555", expected: "agent:main:+1555" },
  { id: "V082", does: "prefixes another bare E.164 key", raw: "+1666", expected: "agent:main:+1666" },
  {
    id: "V082",
    changed: CASE,
    does: "prefixes a bare Slack channel key",
    raw: "slack:channel:C123",
    expected: "agent:main:slack:channel:C123",
  },
  {
    id: "V082",
    does: "maps a legacy group key without a JID to the unknown channel",
    raw: "group:abc",
    expected: "agent:main:unknown:group:abc",
  },
  { id: "V082", does: "prefixes a bare sub-agent key", raw: "subagent:xyz", expected: "agent:main:subagent:xyz" },
  {
    id: "V083",
    does: "prefixes a bare E.164 key under a custom main key",
    raw: "+1555",
    ctx: { mainKey: "work" },
    expected: "agent:main:+1555",
  },
  {
    id: "V083",
    does: "prefixes another bare E.164 key under a custom main key",
    raw: "+1666",
    ctx: { mainKey: "work" },
    expected: "agent:main:+1666",
  },
  { id: "V084", does: "maps legacy main onto the canonical main key", raw: "main", expected: "agent:main:main" },
  { id: "V084", does: "keeps the canonical main key", raw: "agent:main:main", expected: "agent:main:main" },
  {
    id: "V085",
    does: "maps the agent main key to a custom main key",
    raw: "agent:main:main",
    ctx: { mainKey: "work" },
    expected: "agent:main:work",
  },
  {
    id: "V085",
    does: "keeps the custom main key",
    raw: "agent:main:work",
    ctx: { mainKey: "work" },
    expected: "agent:main:work",
  },
  {
    id: "V086",
    changed: CASE,
    does: "keeps an agent Slack channel key as it is",
    raw: "agent:main:slack:channel:C123",
    expected: "agent:main:slack:channel:C123",
  },
  {
    id: "V087",
    does: "maps a legacy group JID to a WhatsApp group",
    raw: "group:123@g.us",
    expected: "agent:main:whatsapp:group:123@g.us",
  },
  {
    id: "V087",
    does: "maps a bare group JID to a WhatsApp group",
    raw: "456@g.us",
    expected: "agent:main:whatsapp:group:456@g.us",
  },
  {
    id: "V087",
    does: "maps a whatsapp-prefixed group JID to a WhatsApp group",
    raw: "whatsapp:789@g.us",
    expected: "agent:main:whatsapp:group:789@g.us",
  },
  { id: "V087", does: "lowercases a cron job id", raw: "cron:Job-1", expected: "agent:main:cron:job-1" },
  { id: "V087", does: "keeps global", raw: "global", expected: "global" },
  { id: "V090", does: "writes node:<id> as node-<id>", raw: "node:1", expected: "agent:main:node-1" },
  { id: "V090", does: "prefixes node-<id>", raw: "node-1", expected: "agent:main:node-1" },
];

describe("canonicalizeSessionKey", () => {
  it.each(named(CANONICAL_VECTORS))("%s", (_name, { raw, ctx, expected }) => {
    expect(canonicalizeSessionKey(raw, ctx)).toBe(expected);
  });
});
