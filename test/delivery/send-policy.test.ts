import { describe, expect, it } from "vitest";
import { SessionConfigSchema } from "../../src/config/schema/session.js";
import { resolveSendPolicy } from "../../src/delivery/send-policy.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import type { ChatType } from "../../src/routing/session-key.js";
import type { SessionEntry } from "../../src/sessions/session-entry.js";

// Policies go through the config schema, as at start: it trims and lowercases `keyPrefix` and
// `channel` and reads chatType "dm" as "direct".
const policy = (raw: unknown) => SessionConfigSchema.shape.sendPolicy.parse(raw);
const groupDeny = { rules: [{ action: "deny", match: { channel: "discord", chatType: "group" } }] };
const entry = (fields: Partial<SessionEntry>): SessionEntry => ({ sessionId: "s", updatedAt: 0, ...fields });

interface Row {
  /** what the row shows, when the policy and key alone do not say it */
  name?: string;
  raw: unknown;
  key: string;
  entry?: SessionEntry;
  channel?: string;
  chatType?: ChatType;
  expected: "allow" | "deny";
  source: "override" | "rule" | "default";
}

// sendPolicy as docs/commands.md describes it. Keys are read with parseSessionKey, so bare keys are canonical agent keys.
const rows: Row[] = [
  { name: "cfg {}", raw: undefined, key: "main", expected: "allow", source: "default" },
  { name: "cfg {} through the schema", raw: {}, key: "main", expected: "allow", source: "default" },
  {
    raw: { default: "allow" },
    key: "main",
    entry: entry({ sendPolicy: "deny" }),
    expected: "deny",
    source: "override",
  },
  {
    raw: groupDeny,
    key: "discord:group:dev",
    entry: entry({ channel: "discord", chatType: "group" }),
    expected: "deny",
    source: "rule",
  },
  {
    raw: { rules: [{ action: "deny", match: { keyPrefix: "cron:" } }] },
    key: "cron:job-1",
    expected: "deny",
    source: "rule",
  },
  {
    name: "keyPrefix matches with or without agent:<id>",
    raw: { rules: [{ action: "deny", match: { keyPrefix: "cron:" } }] },
    key: "agent:main:cron:job-1",
    expected: "deny",
    source: "rule",
  },
  {
    name: "rule CRON:, key cron:job-1",
    raw: { rules: [{ action: "deny", match: { keyPrefix: "CRON:" } }] },
    key: "cron:job-1",
    expected: "deny",
    source: "rule",
  },
  {
    name: "keys are compared in canonical form: rule cron:, key CRON:job-1",
    raw: { rules: [{ action: "deny", match: { keyPrefix: "cron:" } }] },
    key: "CRON:job-1",
    expected: "deny",
    source: "rule",
  },
  {
    name: "the key's chat type wins over the entry's: group key, entry chatType channel",
    raw: groupDeny,
    key: "discord:group:dev",
    entry: entry({ channel: "discord", chatType: "channel" }),
    expected: "deny",
    source: "rule",
  },
  {
    name: "key without a chat type, entry discord chatType channel",
    raw: groupDeny,
    key: "cron:job-1",
    entry: entry({ channel: "discord", chatType: "channel" }),
    expected: "allow",
    source: "default",
  },
  {
    name: "no entry, key discord:group:dev",
    raw: groupDeny,
    key: "discord:group:dev",
    expected: "deny",
    source: "rule",
  },
  {
    name: "facts come from the parsed key: no entry, key agent:main:discord:group:dev",
    raw: groupDeny,
    key: "agent:main:discord:group:dev",
    expected: "deny",
    source: "rule",
  },
  {
    raw: groupDeny,
    key: "agent:main:discord:group:dev",
    entry: entry({ lastChannel: "Discord" }),
    expected: "deny",
    source: "rule",
  },
  {
    name: "entry lastChannel Discord and chatType group, key without facts",
    raw: groupDeny,
    key: "hook:x",
    entry: entry({ lastChannel: "Discord", chatType: "group" }),
    expected: "deny",
    source: "rule",
  },
  { raw: { default: "deny" }, key: "main", expected: "deny", source: "default" },
  {
    raw: { default: "deny", rules: [{ action: "allow", match: { channel: "telegram" } }] },
    key: "cron:job-1",
    channel: "telegram",
    expected: "allow",
    source: "rule",
  },
  {
    name: "telegram group key",
    raw: {
      rules: [
        { action: "allow", match: { channel: "telegram" } },
        { action: "deny", match: { chatType: "group" } },
      ],
    },
    key: "telegram:group:-100",
    expected: "deny",
    source: "rule",
  },
  {
    name: "telegram group from the arguments",
    raw: {
      rules: [
        { action: "allow", match: { channel: "telegram" } },
        { action: "deny", match: { chatType: "group" } },
      ],
    },
    key: "cron:job-1",
    channel: "Telegram",
    chatType: "group",
    expected: "deny",
    source: "rule",
  },
  { name: "main", raw: { rules: [{ action: "deny" }] }, key: "main", expected: "deny", source: "rule" },
  {
    name: "group",
    raw: { rules: [{ action: "deny" }] },
    key: "whatsapp:group:123@g.us",
    expected: "deny",
    source: "rule",
  },
  {
    raw: { default: "deny", rules: [{ action: "deny" }] },
    key: "main",
    entry: entry({ sendPolicy: "allow" }),
    expected: "allow",
    source: "override",
  },
  {
    name: "DM key",
    raw: { rules: [{ action: "deny", match: { chatType: "dm" } }] },
    key: "telegram:dm:42",
    expected: "deny",
    source: "rule",
  },
  {
    name: "chatType direct argument",
    raw: { rules: [{ action: "deny", match: { chatType: "dm" } }] },
    key: "cron:job-1",
    chatType: "direct",
    expected: "deny",
    source: "rule",
  },
  {
    raw: { rules: [{ action: "deny", match: { keyPrefix: " hook: " } }] },
    key: "hook:abc",
    expected: "deny",
    source: "rule",
  },
];

describe("resolveSendPolicy", () => {
  const title = (row: Row) =>
    `${row.name ? `${row.name}: ` : ""}policy ${JSON.stringify(row.raw ?? null)}, key ${row.key}` +
    `${row.channel ? `, channel ${row.channel}` : ""}${row.chatType ? `, chatType ${row.chatType}` : ""}` +
    `${row.entry ? `, entry ${JSON.stringify({ ...row.entry, sessionId: undefined, updatedAt: undefined })}` : ""} -> ${row.expected} (${row.source})`;
  it.each(rows.map((row) => [title(row), row] as const))("%s", (_title, row) => {
    const key = parseSessionKey(row.key)!;
    const result = resolveSendPolicy({
      policy: row.raw === undefined ? undefined : policy(row.raw),
      entry: row.entry,
      key,
      channel: row.channel,
      chatType: row.chatType,
    });
    expect(result.decision).toBe(row.expected);
    expect(result.source).toBe(row.source);
  });

  it("matches keyPrefix against the full canonical key too, case-insensitively", () => {
    const rules = policy({ rules: [{ action: "deny", match: { keyPrefix: "Agent:Ops:Telegram:dm:abc" } }] });
    expect(resolveSendPolicy({ policy: rules, key: parseSessionKey("agent:ops:telegram:dm:AbC")! }).decision).toBe(
      "deny",
    );
    expect(resolveSendPolicy({ policy: rules, key: parseSessionKey("agent:main:telegram:dm:AbC")! }).decision).toBe(
      "allow",
    );
  });

  it("prefers the key's channel over the channel argument and the entry", () => {
    const rules = policy({ rules: [{ action: "deny", match: { channel: "telegram" } }] });
    const key = parseSessionKey("discord:group:dev")!;
    expect(
      resolveSendPolicy({ policy: rules, key, channel: "telegram", entry: entry({ channel: "telegram" }) }).decision,
    ).toBe("allow");
  });

  it("reports the index of the deciding rule", () => {
    const rules = policy({
      rules: [
        { action: "allow", match: { channel: "slack" } },
        { action: "allow" },
        { action: "deny", match: { keyPrefix: "cron:" } },
      ],
    });
    expect(resolveSendPolicy({ policy: rules, key: parseSessionKey("main")! })).toEqual({
      decision: "allow",
      source: "rule",
      ruleIndex: 1,
    });
    expect(resolveSendPolicy({ policy: rules, key: parseSessionKey("cron:x")! })).toEqual({
      decision: "deny",
      source: "rule",
      ruleIndex: 2,
    });
  });
});
