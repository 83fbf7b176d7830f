import { describe, expect, it } from "vitest";
import { SwitchboardError } from "../../src/errors.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import {
  mainSessionKey,
  notASessionKey,
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
