import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNELS } from "../../adapters/index.js";
import { loadConfig as loadWithoutTable } from "../../src/config/index.js";
import { parseConfig } from "../adapters/table-config.js";

const loadConfig = (file: string) => loadWithoutTable(file, CHANNELS);
import type { SwitchboardError } from "../../src/errors.js";

async function configFile(text: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-config-"));
  const file = path.join(dir, "switchboard.json5");
  await writeFile(file, text);
  return file;
}

function problems(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    return [...(error as SwitchboardError).details];
  }
  throw new Error("expected the config to be rejected");
}

describe("loadConfig", () => {
  it("uses every default when the file is missing", async () => {
    const loaded = await loadConfig(path.join(os.tmpdir(), "does-not-exist", "switchboard.json5"));
    expect(loaded.exists).toBe(false);
    expect(loaded.config.session).toMatchObject({
      scope: "per-sender",
      dmScope: "main",
      mainKey: "main",
      resetTriggers: ["/new", "/reset"],
      sendPolicy: { default: "allow", rules: [] },
      agentToAgent: { maxPingPongTurns: 5 },
    });
    expect(loaded.config.agents.defaults).toMatchObject({
      model: "offline/echo",
      subagents: { archiveAfterMinutes: 60 },
      sandbox: { sessionToolsVisibility: "spawned" },
    });
    expect(loaded.config.gateway).toEqual({
      bind: "127.0.0.1",
      port: 18789,
      auth: {},
      allowedOrigins: [],
      allowedHosts: [],
      trustedProxies: [],
    });
  });

  it("reads JSON5 with comments, unquoted keys and trailing commas", async () => {
    const file = await configFile(`{
      // one session per person across channels
      session: { dmScope: "per-peer", identityLinks: { alice: ["telegram:111", "discord:222",], }, },
      agents: { list: [{ id: "home", default: true }, { id: "work", subagents: { allowAgents: ["*"] } }] },
      bindings: [{ agentId: "work", match: { channel: "discord", guildId: 123 } }],
    }`);
    const { config, exists } = await loadConfig(file);
    expect(exists).toBe(true);
    expect(config.session.dmScope).toBe("per-peer");
    expect(config.session.identityLinks).toEqual({ alice: ["telegram:111", "discord:222"] });
    expect(config.bindings[0]!.match).toEqual({ channel: "discord", guildId: "123" });
  });

  it("names the line and column of a JSON5 syntax error", async () => {
    const file = await configFile("{\n  session: { dmScope: 'main' \n}");
    await expect(loadConfig(file)).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringMatching(/switchboard\.json5:3:\d+: not valid JSON5: invalid end of input$/),
    });
  });

  it("rejects a config that is not an object", async () => {
    await expect(loadConfig(await configFile("[1, 2]"))).rejects.toMatchObject({
      message: expect.stringContaining("must be an object"),
    });
  });
});

describe("parseConfig", () => {
  it("names the path of an unknown key and suggests the nearest valid one", () => {
    expect(problems({ session: { dmScop: "per-peer" } })).toEqual([
      "session.dmScop: unknown key (did you mean dmScope?)",
    ]);
  });

  it("lists every problem at once, each with its path", () => {
    expect(
      problems({
        sesion: {},
        session: { dmScope: "per_peer", agentToAgent: { maxPingPongTurns: 6 } },
        gateway: { prot: 1 },
        channels: { telegram: { botToken: 5 } },
      }),
    ).toEqual([
      'session.dmScope: must be one of "main", "per-peer", "per-channel-peer", "per-account-channel-peer" (did you mean "per-peer"?)',
      "session.agentToAgent.maxPingPongTurns: must be at most 5",
      "channels.telegram.botToken: expected string, got number",
      "gateway.prot: unknown key (did you mean port?)",
      "sesion: unknown key (did you mean session?)",
    ]);
  });

  it("rejects numeric ids that are not safe integers (Discord snowflakes), asking for strings", () => {
    // biome-ignore lint/correctness/noPrecisionLoss: the point of the test: an id too big for a JSON number
    const [problem] = problems({ channels: { telegram: { owners: [123456789012345678], allowFrom: [42] } } });
    expect(problem).toMatch(/^channels\.telegram\.owners\[0\]: .*write ids as strings/);
    expect(
      parseConfig({
        channels: { telegram: { owners: ["123456789012345678"], allowFrom: [42, Number.MAX_SAFE_INTEGER] } },
      }).config.channels.telegram?.allowFrom,
    ).toEqual(["42", String(Number.MAX_SAFE_INTEGER)]);
  });

  it("suggests the enum value with the same words in another order", () => {
    expect(problems({ session: { dmScope: "per-peer-channel" } })).toEqual([
      'session.dmScope: must be one of "main", "per-peer", "per-channel-peer", "per-account-channel-peer" (did you mean "per-channel-peer"?)',
    ]);
  });

  it("lists the allowed keys when nothing is close", () => {
    expect(problems({ commands: { zzzzzzzz: true } })).toEqual([
      "commands.zzzzzzzz: unknown key (allowed: text, native, bareAbortWords)",
    ]);
  });

  it("accepts the legacy names provider and surface in a sendPolicy match, as channel", () => {
    const { config, warnings } = parseConfig({
      session: {
        sendPolicy: {
          rules: [
            { action: "deny", match: { provider: "Discord", chatType: "dm" } },
            { action: "deny", match: { surface: "whatsapp" } },
          ],
        },
      },
    });
    expect(config.session.sendPolicy.rules.map((r) => r.match)).toEqual([
      { channel: "discord", chatType: "direct" },
      { channel: "whatsapp" },
    ]);
    expect(warnings).toEqual([
      'session.sendPolicy.rules[0].match.provider: legacy name, read as "channel"; rename it',
      'session.sendPolicy.rules[1].match.surface: legacy name, read as "channel"; rename it',
    ]);
  });

  it("accepts provider in a binding match, and refuses it when it contradicts channel", () => {
    expect(
      parseConfig({ bindings: [{ agentId: "a", match: { provider: "telegram" } }] }).config.bindings[0]!.match.channel,
    ).toBe("telegram");
    expect(problems({ bindings: [{ agentId: "a", match: { channel: "telegram", provider: "discord" } }] })).toEqual([
      'bindings[0].match.provider: conflicts with channel "telegram"; keep only "channel"',
    ]);
  });

  it("checks that bindings and allowAgents name agents of agents.list", () => {
    expect(
      problems({
        agents: { list: [{ id: "home" }, { id: "work", subagents: { allowAgents: ["home", "ghost"] } }] },
        bindings: [{ agentId: "wrok", match: { channel: "telegram" } }],
      }),
    ).toEqual([
      'bindings[0].agentId: unknown agent "wrok" (known agents: home, work); add it to agents.list',
      'agents.list[1].subagents.allowAgents[1]: unknown agent "ghost" (known agents: home, work, or "*" for any)',
    ]);
  });

  it("refuses duplicate agent ids and two default agents", () => {
    expect(
      problems({
        agents: {
          list: [
            { id: "a", default: true },
            { id: "A", default: true },
          ],
        },
      }),
    ).toEqual([
      'agents.list[1].id: duplicate agent id "a"',
      "agents.list: more than one default agent (a, a); mark exactly one with default: true",
    ]);
  });

  it("lowercases the main key and refuses one that is a structural key word", () => {
    expect(parseConfig({ session: { mainKey: " Work " } }).config.session.mainKey).toBe("work");
    expect(problems({ session: { mainKey: "dm" } })[0]).toMatch(/^session\.mainKey: must not be a reserved key word/);
    expect(problems({ session: { mainKey: "a:b" } })[0]).toMatch(/^session\.mainKey: must be letters, digits/);
  });

  it("reads numeric ids in allow lists as strings and keeps an explicit '*'", () => {
    const { config } = parseConfig({ channels: { telegram: { allowFrom: [123456789, "@alice"], owners: ["*"] } } });
    expect(config.channels.telegram).toMatchObject({ allowFrom: ["123456789", "@alice"], owners: ["*"] });
  });

  it("refuses an account id that would be read as a key word", () => {
    expect(problems({ channels: { telegram: { accounts: { group: { botToken: "x" } } } } })[0]).toMatch(
      /^channels\.telegram\.accounts\.group: invalid key: must not be a reserved key word/,
    );
  });

  it("accepts every reset, thread and send-policy setting docs/sessions.md and docs/commands.md describe", () => {
    const { config } = parseConfig({
      session: {
        reset: { mode: "daily", atHour: 4, idleMinutes: 120 },
        resetByType: { thread: { mode: "daily", atHour: 4 }, dm: { mode: "idle", idleMinutes: 240 } },
        resetByChannel: { discord: { mode: "idle", idleMinutes: 10080 } },
        resetTriggers: ["/new", "/reset", "/fresh"],
        store: "~/.switchboard/agents/{agentId}/sessions/sessions.json",
        sendPolicy: { default: "deny", rules: [{ action: "allow", match: { keyPrefix: "Cron:" } }] },
      },
      tools: { agentToAgent: { enabled: true, allow: ["ops-*"] }, subagents: { tools: { deny: ["browser"] } } },
    });
    expect(config.session.resetByChannel).toEqual({ discord: { mode: "idle", idleMinutes: 10080 } });
    expect(config.session.sendPolicy.rules[0]!.match).toEqual({ keyPrefix: "cron:" });
    expect(config.tools.subagents.tools).toEqual({ deny: ["browser"] });
    expect(problems({ session: { reset: { atHour: 24 } } })).toEqual(["session.reset.atHour: must be at most 23"]);
  });
});
