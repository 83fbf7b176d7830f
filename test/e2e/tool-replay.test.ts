// The exactly-once promise of our own tools across a crash (docs/reliability.md), tried with real
// gateway processes, the real Telegram adapter and a fake Bot API: a turn SIGKILLed right after a
// tool call returned and before its reply is replayed at the next start, its recorded calls are
// answered from the record, and nothing the call did happens twice.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import { type GatewayChild, until, useGatewayChildren } from "../support/gateway-child.js";
import { readStateFile } from "../support/read-state-file.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const sentTexts = (fake: FakeTelegramServer) => fake.sent.map((s) => s.text);

/** A gateway whose model plays `rules`. */
async function gatewayWith(env: Record<string, string>, rules: PlaybookRule[]): Promise<GatewayChild> {
  return start("platform-gateway-process.ts", { ...env, SB_PLAY: JSON.stringify(rules) });
}

/** Pushes Ada's DM and waits for the gateway to die in that turn (the playbook's `kill` step). */
async function dieOn(gateway: GatewayChild, fake: FakeTelegramServer, text: string): Promise<void> {
  const exited = new Promise((resolve) => gateway.process.once("exit", (_code, signal) => resolve(signal)));
  fake.push(adaDm(text, 1));
  expect(await exited).toBe("SIGKILL");
}

/** A started fake Bot API and a fresh home for one test. */
async function setUp(config: Record<string, unknown> = {}) {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  const home = await tempHome();
  return { fake, home, env: { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_CONFIG: JSON.stringify(config) } };
}

const KILL: PlayStep = { kill: true };

describe("a turn killed right after a tool call returned", () => {
  it("sessions_send: the target session has the message once, and the caller's reply arrives once", async () => {
    const { fake, env } = await setUp({ session: { agentToAgent: { maxPingPongTurns: 0 } } });
    const rules = (then: PlayStep): PlaybookRule[] => [
      { when: "Agent-to-agent announce step", first: { text: "ANNOUNCE_SKIP" } },
      { when: "Agent-to-agent message context", first: { text: "pong" } },
      { when: "hello ops", first: { text: "ops here" } },
      {
        when: "please send",
        first: {
          toolCalls: [
            { name: "sessions_send", input: { sessionKey: "agent:main:webchat:dm:ops", message: "ping from main" } },
          ],
        },
        then,
      },
    ];
    const first = await gatewayWith(env, rules(KILL));
    const client = await connectGateway(first.url);
    const { runId } = await client.call<{ runId: string }>("chat.send", {
      sessionKey: "agent:main:webchat:dm:ops",
      message: "hello ops",
    });
    await client.call("agent.wait", { runId, timeoutMs: 10_000 });
    await client.close();
    await dieOn(first, fake, "please send");

    const second = await gatewayWith(env, rules({ text: "sent it" }));
    await until(() => sentTexts(fake).includes("sent it"));
    await second.idle();
    expect(sentTexts(fake).filter((t) => t === "sent it")).toHaveLength(1);
    const again = await connectGateway(second.url);
    const history = await again.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: "agent:main:webchat:dm:ops",
    });
    await again.close();
    const pings = history.messages.filter(
      (m) => m.role === "user" && JSON.stringify(m.content).includes("ping from main"),
    );
    expect(pings).toHaveLength(1);
  }, 60_000);

  it("sessions_spawn: one child, one announce, and the caller's reply once", async () => {
    const { fake, home, env } = await setUp();
    const rules = (then: PlayStep): PlaybookRule[] => [
      { when: "Sub-agent announce step", first: { text: "Result: 12 sheep\nNotes: counted twice to be sure" } },
      { when: "Subagent Context", first: { text: "12 sheep" } },
      {
        when: "please spawn",
        first: { toolCalls: [{ name: "sessions_spawn", input: { task: "count the sheep", label: "sheep" } }] },
        then,
      },
    ];
    await dieOn(await gatewayWith(env, rules(KILL)), fake, "please spawn");

    const second = await gatewayWith(env, rules({ text: "spawned it" }));
    const announces = () => sentTexts(fake).filter((t) => t?.startsWith('Sub-agent "sheep"'));
    await until(() => sentTexts(fake).includes("spawned it") && announces().length > 0);
    await second.idle();
    expect(sentTexts(fake).filter((t) => t === "spawned it")).toHaveLength(1);
    // The child started before the kill: it is announced once, as finished or as cut off by the restart.
    expect(announces()).toHaveLength(1);
    const children = Object.values(await readStateFile(path.join(home, "state", "subagents.json")));
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ task: "count the sheep", state: expect.stringMatching(/announced|archived/) });
  }, 60_000);

  it("write and append: the file is written once (a later change survives) and the line appended once", async () => {
    const { fake, home, env } = await setUp();
    const calls = [
      { name: "write", input: { path: "notes/plan.md", content: "v1\n" } },
      { name: "append", input: { path: "notes/log.md", text: "- noted\n" } },
    ];
    const rules = (then: PlayStep): PlaybookRule[] => [{ when: "please note", first: { toolCalls: calls }, then }];
    await dieOn(await gatewayWith(env, rules(KILL)), fake, "please note");
    const workspace = path.join(home, "agents", "main", "workspace");
    expect(await readFile(path.join(workspace, "notes/plan.md"), "utf8")).toBe("v1\n");
    // The owner edits the file while the gateway is down: a second write would undo it.
    await writeFile(path.join(workspace, "notes/plan.md"), "v2, edited by hand\n");

    const second = await gatewayWith(env, rules({ text: "noted" }));
    await until(() => sentTexts(fake).includes("noted"));
    await second.idle();
    expect(sentTexts(fake).filter((t) => t === "noted")).toHaveLength(1);
    expect(await readFile(path.join(workspace, "notes/plan.md"), "utf8")).toBe("v2, edited by hand\n");
    expect(await readFile(path.join(workspace, "notes/log.md"), "utf8")).toBe("- noted\n");
  }, 60_000);
});
