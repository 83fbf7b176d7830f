import { describe, expect, it } from "vitest";
import { sessionTitle } from "../../../src/gateway/methods/session-title.js";
import { parseSessionKey } from "../../../src/routing/parse-session-key.js";
import type { SessionEntry } from "../../../src/sessions/session-entry.js";

const entry = (fields: Partial<SessionEntry> = {}): SessionEntry => ({ sessionId: "s", updatedAt: 1, ...fields });
const UUID = "9b2e41c0-5a7d-4c4e-9d7e-3f0b8a1c2d3e";

function title(key: string, fields: Partial<SessionEntry> = {}, extra: { task?: string; showAgent?: boolean } = {}) {
  const parsed = parseSessionKey(key);
  if (!parsed) throw new Error(`not a key: ${key}`);
  return sessionTitle({ parsed, entry: entry(fields), clientChannel: "webchat", showAgent: false, ...extra });
}

describe("sessionTitle", () => {
  it.each([
    ["a label first", `agent:main:subagent:${UUID}`, { label: "digger" }, { task: "dig" }, "digger"],
    [
      "a sub-agent by its task",
      `agent:main:subagent:${UUID}`,
      {},
      { task: "count to three" },
      "Sub-agent: count to three",
    ],
    ["a sub-agent without a known task by its short id", `agent:main:subagent:${UUID}`, {}, {}, "Sub-agent 9b2e41c0"],
    [
      "the main session as such, not by the last sender",
      "agent:main:main",
      { displayName: "owner" },
      {},
      "Main session",
    ],
    [
      "the main session with its agent when there are several",
      "agent:ops:main",
      {},
      { showAgent: true },
      "Main session of ops",
    ],
    [
      "a web chat by its id, not as 'owner'",
      `agent:main:webchat:dm:${UUID}`,
      { displayName: "owner" },
      {},
      "Web chat 9b2e41c0",
    ],
    ["a platform DM by the person's name", "agent:main:telegram:dm:42", { displayName: "Ada" }, {}, "Ada"],
    [
      "a group by its display name",
      "agent:main:telegram:group:-100",
      { displayName: "telegram:g-team" },
      {},
      "telegram:g-team",
    ],
    ["a cron session by its job", "agent:main:cron:daily", {}, {}, "Cron job daily"],
    ["the key when nothing else is known", "agent:main:telegram:dm:42", {}, {}, "agent:main:telegram:dm:42"],
  ])("names %s", (_what, key, fields, extra, expected) => {
    expect(title(key, fields, extra)).toBe(expected);
  });

  it("keeps a long task to the first line and 60 characters", () => {
    const task = `${"word ".repeat(30)}\nsecond line`;
    const result = title(`agent:main:subagent:${UUID}`, {}, { task });
    expect(result.length).toBe(60);
    expect(result).toMatch(/^Sub-agent: word word .*…$/);
    expect(result).not.toContain("second line");
  });
});
