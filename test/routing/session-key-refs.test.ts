import { describe, expect, it } from "vitest";
import { SwitchboardError } from "../../src/errors.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
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
