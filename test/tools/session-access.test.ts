import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import type { SessionEntry } from "../../src/sessions/session-entry.js";
import {
  agentToAgentAllowed,
  canSee,
  displayKeyOf,
  isSandboxed,
  resolveTarget,
} from "../../src/tools/session-access.js";
import { type ToolCaller, ToolFailure } from "../../src/tools/tool-definition.js";
import { type ToolHarness, type ToolHarnessOptions, createToolHarness } from "../support/tool-harness.js";

const config = (raw: Record<string, unknown>) => parseConfig(raw).config;
const key = (raw: string) => parseSessionKey(raw)!;
const entry = (fields: Partial<SessionEntry> = {}): SessionEntry => ({ sessionId: "s-1", updatedAt: 1, ...fields });
const callerIn = (raw: string, sandboxed = false): ToolCaller => {
  const parsed = key(raw);
  return { agentId: "agentId" in parsed ? parsed.agentId : "main", sessionKey: parsed, sandboxed };
};

describe("agentToAgentAllowed", () => {
  const agents = { agents: { list: [{ id: "main" }, { id: "ops" }, { id: "ops-eu" }, { id: "research" }] } };

  it.each([
    ["disabled by default", {}, "main", "ops", false],
    ["always within one agent, even when disabled", {}, "ops", "ops", true],
    ["any pair when enabled with no allow list", { enabled: true }, "main", "research", true],
    ["both sides on the allow list", { enabled: true, allow: ["main", "ops"] }, "main", "ops", true],
    ["the target missing from the allow list", { enabled: true, allow: ["main", "ops"] }, "main", "research", false],
    ["the requester missing from the allow list", { enabled: true, allow: ["ops", "research"] }, "main", "ops", false],
    ["a glob on both sides", { enabled: true, allow: ["ops*", "main"] }, "main", "ops-eu", true],
    ["a glob that does not match", { enabled: true, allow: ["ops-*", "main"] }, "main", "ops", false],
    ["the * pattern", { enabled: true, allow: ["*"] }, "research", "ops", true],
    ["exact names compared case-sensitively", { enabled: true, allow: ["Main", "ops"] }, "main", "ops", false],
    ["globs compared case-insensitively", { enabled: true, allow: ["MA*", "ops"] }, "main", "ops", true],
    [
      "nothing across agents when disabled, whatever the allow list says",
      { enabled: false, allow: ["main", "ops"] },
      "main",
      "ops",
      false,
    ],
  ])("%s", (_name, agentToAgent, from, to, expected) => {
    expect(agentToAgentAllowed(config({ ...agents, tools: { agentToAgent } }), from, to)).toBe(expected);
  });
});

describe("isSandboxed", () => {
  it.each([
    ["off (the default)", {}, "agent:main:telegram:dm:42", false],
    ["all: the main session", { defaults: { sandbox: { mode: "all" } } }, "agent:main:main", true],
    ["all: a group", { defaults: { sandbox: { mode: "all" } } }, "agent:main:telegram:group:-100", true],
    ["non-main: the main session", { defaults: { sandbox: { mode: "non-main" } } }, "agent:main:main", false],
    [
      "non-main: the main session's thread",
      { defaults: { sandbox: { mode: "non-main" } } },
      "agent:main:main:thread:7",
      false,
    ],
    ["non-main: a DM", { defaults: { sandbox: { mode: "non-main" } } }, "agent:main:telegram:dm:42", true],
    ["non-main: a sub-agent", { defaults: { sandbox: { mode: "non-main" } } }, "agent:main:subagent:abc", true],
    [
      "a per-agent mode over the default",
      { defaults: { sandbox: { mode: "all" } }, list: [{ id: "main", sandbox: { mode: "off" } }] },
      "agent:main:main",
      false,
    ],
    [
      "a per-agent mode where the default is off",
      { list: [{ id: "main", sandbox: { mode: "non-main" } }] },
      "agent:main:telegram:dm:42",
      true,
    ],
  ])("%s", (_name, agents, sessionKey, expected) => {
    expect(isSandboxed(config({ agents }), "main", key(sessionKey))).toBe(expected);
  });

  it("does not sandbox the owner calling without a session under non-main", () => {
    expect(isSandboxed(config({ agents: { defaults: { sandbox: { mode: "non-main" } } } }), "main", undefined)).toBe(
      false,
    );
  });

  // BUG (open): isSandboxed only exempts kind "main", so under scope global with mode non-main the
  // global session (every chat's main) runs sandboxed.
  it("treats the global session as the main one under non-main (session.scope global)", () => {
    const cfg = config({ session: { scope: "global" }, agents: { defaults: { sandbox: { mode: "non-main" } } } });
    expect(isSandboxed(cfg, "main", key("global"))).toBe(false);
  });

  it("applies the override of the caller's agent only", () => {
    const cfg = config({ agents: { list: [{ id: "main" }, { id: "ops", sandbox: { mode: "all" } }] } });
    expect(isSandboxed(cfg, "ops", key("agent:ops:main"))).toBe(true);
    expect(isSandboxed(cfg, "main", key("agent:main:main"))).toBe(false);
  });

  it("keeps agents.defaults.sandbox.mode when an agent overrides only sessionToolsVisibility", () => {
    const cfg = config({
      agents: {
        defaults: { sandbox: { mode: "all" } },
        list: [{ id: "main", sandbox: { sessionToolsVisibility: "all" } }],
      },
    });
    expect(isSandboxed(cfg, "main", key("agent:main:telegram:dm:42"))).toBe(true);
  });
});

describe("canSee", () => {
  const twoAgents = { agents: { list: [{ id: "main" }, { id: "ops" }] } };

  it("lets a session see itself, even sandboxed and across a disabled agent-to-agent policy", () => {
    const cfg = config({ ...twoAgents, agents: { ...twoAgents.agents, defaults: { sandbox: { mode: "all" } } } });
    const caller = callerIn("agent:ops:telegram:dm:42", true);
    expect(canSee(cfg, { ...caller, agentId: "main" }, key("agent:ops:telegram:dm:42"), entry(), "main")).toBe(true);
  });

  it("lets an unsandboxed session see every session of its own agent", () => {
    expect(
      canSee(config({}), callerIn("agent:main:telegram:dm:42"), key("agent:main:discord:group:dev"), entry(), "main"),
    ).toBe(true);
  });

  it("shows a sandboxed session (visibility spawned, the default) only the sessions it spawned", () => {
    const cfg = config({ agents: { defaults: { sandbox: { mode: "all" } } } });
    const caller = callerIn("agent:main:telegram:dm:42", true);
    expect(
      canSee(cfg, caller, key("agent:main:subagent:a"), entry({ spawnedBy: "agent:main:telegram:dm:42" }), "main"),
    ).toBe(true);
    expect(canSee(cfg, caller, key("agent:main:subagent:b"), entry({ spawnedBy: "agent:main:main" }), "main")).toBe(
      false,
    );
    expect(canSee(cfg, caller, key("agent:main:main"), entry(), "main")).toBe(false);
  });

  it("shows a sandboxed session everything of its agent with sessionToolsVisibility all", () => {
    const cfg = config({ agents: { defaults: { sandbox: { mode: "all", sessionToolsVisibility: "all" } } } });
    expect(canSee(cfg, callerIn("agent:main:telegram:dm:42", true), key("agent:main:main"), entry(), "main")).toBe(
      true,
    );
  });

  it("honours a per-agent sessionToolsVisibility", () => {
    const cfg = config({
      agents: {
        defaults: { sandbox: { mode: "all" } },
        list: [{ id: "main", sandbox: { mode: "all", sessionToolsVisibility: "all" } }],
      },
    });
    expect(canSee(cfg, callerIn("agent:main:telegram:dm:42", true), key("agent:main:main"), entry(), "main")).toBe(
      true,
    );
  });

  it("does not restrict a sandboxed sub-agent to its own children", () => {
    const cfg = config({ agents: { defaults: { sandbox: { mode: "all" } } } });
    expect(canSee(cfg, callerIn("agent:main:subagent:x", true), key("agent:main:main"), entry(), "main")).toBe(true);
  });

  it("needs tools.agentToAgent for another agent's sessions", () => {
    const caller = callerIn("agent:main:main");
    expect(canSee(config(twoAgents), caller, key("agent:ops:main"), entry(), "main")).toBe(false);
    expect(
      canSee(
        config({ ...twoAgents, tools: { agentToAgent: { enabled: true } } }),
        caller,
        key("agent:ops:main"),
        entry(),
        "main",
      ),
    ).toBe(true);
    expect(
      canSee(
        config({ ...twoAgents, tools: { agentToAgent: { enabled: true, allow: ["ops"] } } }),
        caller,
        key("agent:ops:main"),
        entry(),
        "main",
      ),
    ).toBe(false);
  });

  it("keeps the sandbox rule across agents: an allowed agent's session must still be a child", () => {
    const cfg = config({
      agents: { ...twoAgents.agents, defaults: { sandbox: { mode: "all" } } },
      tools: { agentToAgent: { enabled: true } },
    });
    const caller = callerIn("agent:main:main", true);
    expect(canSee(cfg, caller, key("agent:ops:subagent:c"), entry({ spawnedBy: "agent:main:main" }), "main")).toBe(
      true,
    );
    expect(canSee(cfg, caller, key("agent:ops:main"), entry(), "main")).toBe(false);
  });

  // BUG (open): canSee answers `global` before the sandbox and agent-to-agent checks.
  it("keeps a sandboxed session away from the global session it did not spawn (session.scope global)", () => {
    const cfg = config({ session: { scope: "global" }, agents: { defaults: { sandbox: { mode: "all" } } } });
    expect(canSee(cfg, callerIn("agent:main:cron:nightly", true), key("global"), entry(), "main")).toBe(false);
  });

  it.each(["global", "unknown"])("never shows the reserved %s session", (reserved) => {
    expect(canSee(config({}), callerIn("agent:main:main"), key(reserved), entry(), "main")).toBe(false);
  });
});

describe("displayKeyOf", () => {
  const deps = (mainKey: string) => ({ keys: { defaultAgentId: "main", mainKey, scope: "per-sender" as const } });

  it.each([
    ["shows the caller's own main as main", "main", "ops", "agent:ops:main", "main"],
    ["shows the caller's own main under a custom mainKey as main", "work", "ops", "agent:ops:work", "main"],
    ["shows another agent's main canonically", "main", "ops", "agent:main:main", "agent:main:main"],
    [
      "shows agent:<id>:main canonically when mainKey is another word",
      "work",
      "ops",
      "agent:ops:main",
      "agent:ops:main",
    ],
    ["shows any other key canonically", "main", "ops", "agent:ops:telegram:dm:42", "agent:ops:telegram:dm:42"],
  ])("%s", (_name, mainKey, agentId, sessionKey, expected) => {
    expect(displayKeyOf(deps(mainKey), { agentId, sandboxed: false }, sessionKey, agentId)).toBe(expected);
  });
});

describe("resolveTarget", () => {
  let h: ToolHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const start = async (options: ToolHarnessOptions = {}) => (h = await createToolHarness(options));
  const failure = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolFailure);
    return err as ToolFailure;
  };

  it("finds a session by its sessionId, in any agent the caller may see", async () => {
    await start({
      config: { agents: { list: [{ id: "main" }, { id: "ops" }] }, tools: { agentToAgent: { enabled: true } } },
    });
    const ops = await h!.seed({ key: "agent:ops:discord:channel:1457165743010611293" });
    const target = await resolveTarget(h!.deps, h!.caller("agent:main:main"), ops.entry.sessionId);
    expect(target).toMatchObject({
      agentId: "ops",
      displayKey: "agent:ops:discord:channel:1457165743010611293",
      parsed: { key: ops.key },
      entry: { sessionId: ops.entry.sessionId },
    });
  });

  it("prefers an exact sessionId over a key with the same text", async () => {
    await start();
    await h!.seed({ key: "agent:main:main" });
    const other = await h!.seed({ key: "agent:main:telegram:dm:42", entry: { sessionId: "main" } });
    const target = await resolveTarget(h!.deps, h!.owner(), "main");
    expect(target.parsed.key).toBe(other.key);
  });

  it.each([
    ["a canonical key", "agent:main:telegram:dm:42"],
    ["a key in another case", "AGENT:Main:Telegram:DM:42"],
    ["a bare key of the caller's agent", "telegram:dm:42"],
    ["a key with surrounding space", "  agent:main:telegram:dm:42 "],
  ])("finds a session by %s", async (_name, ref) => {
    await start();
    await h!.seed({ key: "agent:main:telegram:dm:42" });
    expect((await resolveTarget(h!.deps, h!.owner(), ref)).parsed.key).toBe("agent:main:telegram:dm:42");
  });

  it("resolves main to the main session of the caller's own agent, not the default agent's", async () => {
    await start({ config: { agents: { list: [{ id: "main", default: true }, { id: "ops" }] } } });
    await h!.seed({ key: "agent:main:main" });
    await h!.seed({ key: "agent:ops:main" });
    const target = await resolveTarget(h!.deps, h!.caller("agent:ops:telegram:dm:42"), "main");
    expect(target).toMatchObject({ agentId: "ops", displayKey: "main", parsed: { key: "agent:ops:main" } });
  });

  it("resolves main through session.mainKey", async () => {
    await start({ config: { session: { mainKey: "work" } } });
    await h!.seed({ key: "agent:main:work" });
    expect(await resolveTarget(h!.deps, h!.owner(), "main")).toMatchObject({
      displayKey: "main",
      parsed: { key: "agent:main:work" },
    });
  });

  it("resolves main to the global session under session.scope global", async () => {
    await start({ config: { session: { scope: "global" } } });
    await h!.seed({ key: "global" });
    const target = await resolveTarget(h!.deps, h!.caller("global"), "main");
    expect(target.parsed.key).toBe("global");
  });

  // BUG (open): same cause; canSee cannot tell whose `global` it is (the key names no agent).
  it("keeps another agent's global session hidden by its sessionId while agent-to-agent is disabled (session.scope global)", async () => {
    await start({ config: { session: { scope: "global" }, agents: { list: [{ id: "main" }, { id: "ops" }] } } });
    await h!.seed({ key: "global", agentId: "ops", entry: { sessionId: "ops-global" } });
    const err = await failure(resolveTarget(h!.deps, h!.caller("agent:main:telegram:dm:42"), "ops-global"));
    expect(err.message).toBe("Unknown session 'ops-global'. Use sessions_list to see the keys you can reach.");
  });

  it("gives a hidden session exactly the error of a missing one", async () => {
    await start({ config: { agents: { list: [{ id: "main" }, { id: "ops" }] } } });
    const caller = h!.caller("agent:main:main");
    const missing = await failure(resolveTarget(h!.deps, caller, "agent:ops:main"));
    const hidden = await h!.seed({ key: "agent:ops:main", entry: { sessionId: "ops-secret" } });
    const found = await failure(resolveTarget(h!.deps, caller, hidden.key));
    expect(found.message).toBe(missing.message);
    expect(found.status).toBe(missing.status);
    expect(missing).toMatchObject({
      status: "error",
      message: "Unknown session 'agent:ops:main'. Use sessions_list to see the keys you can reach.",
    });
  });

  it("gives a hidden sessionId the unknown-session error with the id as given", async () => {
    await start({ config: { agents: { defaults: { sandbox: { mode: "all" } } } } });
    const hidden = await h!.seed({ key: "agent:main:discord:group:dev", entry: { sessionId: "sess-hidden" } });
    const err = await failure(resolveTarget(h!.deps, h!.caller("agent:main:telegram:dm:42"), hidden.entry.sessionId));
    expect(err.message).toBe("Unknown session 'sess-hidden'. Use sessions_list to see the keys you can reach.");
  });

  it.each([
    ["an unknown agent", "agent:nobody:main"],
    ["the reserved global", "global"],
    ["the reserved unknown", "unknown"],
    ["text that is no key", "::"],
    ["a key never created", "agent:main:telegram:dm:404"],
  ])("refuses %s with the unknown-session error", async (_name, ref) => {
    await start();
    await h!.seed({ key: "agent:main:main" });
    const err = await failure(resolveTarget(h!.deps, h!.owner(), ref));
    expect(err.message).toBe(`Unknown session '${ref}'. Use sessions_list to see the keys you can reach.`);
  });
});
