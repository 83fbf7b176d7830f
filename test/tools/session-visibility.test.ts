// Session tools act with the authority of whoever triggered the turn. Driven
// through a real gateway, a fake Telegram and the offline model, asserting the replies people see.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { resolveVisibility } from "../../src/tools/session-visibility.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const OWNER = "1";
const COMMAND_USER = "2";
const TALKER = "3";
const GROUP = "-100";
const telegram = {
  owners: [OWNER],
  commandAllowFrom: [COMMAND_USER],
  allowFrom: [OWNER, COMMAND_USER, TALKER],
  groupAllowFrom: [OWNER, COMMAND_USER, TALKER],
  groups: { "*": { requireMention: false } },
};
const dmKey = (id: string) => `agent:main:telegram:dm:${id}`;
const childOf = (id: string) => `agent:main:subagent:child-of-${id}`;

let seq = 0;
async function setup(extra: Record<string, unknown> = {}) {
  const fake = createFakeChannelAdapter({ id: "telegram" });
  const gw = await start({
    adapters: [fake],
    config: { session: { dmScope: "per-channel-peer" }, channels: { telegram }, ...extra },
  });
  const ask = async (sender: string, where: "dm" | "group", text: string): Promise<string> => {
    const chat = where === "dm" ? { type: "direct", id: sender } : { type: "group", id: GROUP, title: "Team" };
    const before = fake.sent.length;
    await fake.receive(
      InboundMessageSchema.parse({ channel: "telegram", chat, sender: { id: sender }, messageId: `m${++seq}`, text }),
    );
    await expect
      .poll(() => fake.sent.slice(before).some((s) => s.target.to === chat.id), { timeout: 5_000 })
      .toBe(true);
    return fake.sent
      .slice(before)
      .filter((s) => s.target.to === chat.id)
      .map((s) => s.message.text)
      .join("\n");
  };
  // Everyone has a DM session; the owner's and the talker's DMs each spawned a sub-agent.
  for (const id of [OWNER, COMMAND_USER, TALKER]) await ask(id, "dm", "hello");
  await ask(TALKER, "group", "hello group");
  const { store } = await gw.gateway.core.sessions.forAgent("main");
  for (const id of [OWNER, TALKER])
    await store.patch(childOf(id), () => ({ sessionId: `child-${id}`, updatedAt: Date.now(), spawnedBy: dmKey(id) }));
  return { gw, ask };
}

/** The other person's session each actor tries to reach: the owner tries a talker's, everyone else the owner's. */
const victimOf = (actor: string) => (actor === OWNER ? TALKER : OWNER);

const OPS: Record<string, { text: (victim: string) => string; allowed: (reply: string, victim: string) => boolean }> = {
  list: { text: () => "list sessions", allowed: (reply, victim) => reply.includes(dmKey(victim)) },
  history: {
    text: (victim) => `history ${dmKey(victim)}`,
    allowed: (reply) => reply.includes('"sessionId"') && !reply.includes("Unknown session"),
  },
  send: {
    text: (victim) => `send to ${dmKey(victim)}: do something for me`,
    allowed: (reply) => !reply.includes("Unknown session") && reply.includes("sessions_send"),
  },
  // The sub-agent the other person's session spawned.
  spawn: {
    text: (victim) => `history ${childOf(victim)}`,
    allowed: (reply) => reply.includes('"sessionId"') && !reply.includes("Unknown session"),
  },
};

const actors = [
  ["owner", OWNER, true],
  ["command user", COMMAND_USER, false],
  ["talker", TALKER, false],
] as const;
const cells = actors.flatMap(([name, id, allowed]) =>
  (["dm", "group"] as const).flatMap((where) =>
    Object.keys(OPS).map((op) => [name, where, op, allowed ? "allow" : "deny", id] as const),
  ),
);

describe("session tools by who triggered the turn", () => {
  it.each(cells)(
    "%s in a %s: %s on another person's session -> %s",
    async (_name, where, op, expected, id) => {
      const { ask } = await setup();
      const victim = victimOf(id);
      const reply = await ask(id, where, OPS[op]!.text(victim));
      expect(OPS[op]!.allowed(reply, victim) ? "allow" : "deny", reply).toBe(expected);
    },
    20_000,
  );

  it("lets a talker spawn, and read and message its own sub-agent, with the announce in its own chat", async () => {
    const { gw, ask } = await setup();
    const spawned = await ask(TALKER, "dm", "spawn: count to three");
    const child = /"childSessionKey":"([^"]+)"/.exec(spawned)?.[1];
    expect(child).toMatch(/^agent:main:subagent:/);
    await expect
      .poll(async () => (await ask(TALKER, "dm", `history ${child}`)).includes('"sessionId"'), { timeout: 5_000 })
      .toBe(true);
    expect(await ask(TALKER, "dm", "list sessions")).toContain(child!);
    expect(await ask(COMMAND_USER, "dm", `history ${child}`)).toContain("Unknown session");
    expect(gw.gateway.core.subagents.list(dmKey(TALKER))[0]?.origin).toMatchObject({ channel: "telegram", to: TALKER });
  }, 20_000);

  it("widens a guest's reach when the owner sets tools.sessions.channels.<channel>.visibility.others", async () => {
    const { ask } = await setup({
      tools: { sessions: { channels: { telegram: { visibility: { others: "agent" } } } } },
    });
    expect(await ask(TALKER, "dm", `history ${dmKey(OWNER)}`)).toContain('"sessionId"');
  }, 20_000);

  it("narrows an owner to its own session with visibility self, per agent", async () => {
    const { ask } = await setup({ tools: { sessions: { agents: { main: { visibility: { owners: "self" } } } } } });
    expect(await ask(OWNER, "dm", `history ${dmKey(TALKER)}`)).toContain("Unknown session");
    expect(await ask(OWNER, "dm", `history ${childOf(OWNER)}`)).toContain("Unknown session");
    expect(await ask(OWNER, "dm", "list sessions")).toContain("Sessions (1)");
  }, 20_000);

  it("keeps the gateway clients (web chat, CLI) at the owners' reach", async () => {
    const { gw } = await setup();
    const client = await gw.client();
    const result = await client.call<{ status?: string; sessionId?: string }>("tools.invoke", {
      tool: "sessions_history",
      args: { sessionKey: dmKey(TALKER) },
    });
    expect(result.sessionId).toBeDefined();
    const sent = await client.call<{ runId: string }>("chat.send", {
      sessionKey: "agent:main:webchat:dm:me",
      message: `history ${dmKey(TALKER)}`,
    });
    expect(await client.call("agent.wait", { runId: sent.runId })).toMatchObject({
      status: "ok",
      text: expect.stringContaining('"sessionId"'),
    });
  }, 20_000);
});

describe("resolveVisibility", () => {
  it.each([
    [{}, true, "telegram", "agent"],
    [{}, false, "telegram", "spawned"],
    [{ visibility: { others: "self" } }, false, "telegram", "self"],
    [{ channels: { telegram: { visibility: { others: "agent" } } } }, false, "telegram", "agent"],
    [{ channels: { telegram: { visibility: { others: "agent" } } } }, false, "discord", "spawned"],
    [
      {
        agents: { main: { visibility: { others: "all" } } },
        channels: { telegram: { visibility: { others: "self" } } },
      },
      false,
      "telegram",
      "all",
    ],
  ] as const)("with tools.sessions %j, owner %s on %s: %s", (sessions, owner, channel, expected) => {
    const { config } = parseConfig({ tools: { sessions } });
    expect(resolveVisibility(config, { agentId: "main", channel, owner })).toBe(expected);
  });
});
