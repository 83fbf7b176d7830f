// The promise of docs/reliability.md for the agent-to-agent flow after a sessions_send, tried with real
// gateway processes, the real Telegram adapter and a fake Bot API: the web chat session "ops" sends Ada's
// Telegram session a question; the reply-back turns and the announce are stored turns, so a SIGKILL in
// the middle of the flow loses nothing: after the restart the remaining steps run once each, the steps
// already done do not run again (the model's calls counted per step: once each, the killed one
// twice), and the announce reaches Ada's chat exactly once; on local files and on PostgreSQL.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import { type GatewayChild, until, useGatewayChildren } from "../support/gateway-child.js";
import { describeBackends } from "../support/state-backends.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const OPS = "agent:main:webchat:dm:ops";
const ADA = "agent:main:main";
const ANNOUNCE = "Agent-to-agent announce step";
const TURN_2 = "Turn 2 of 2";
const SUMS = "Ops asked me some sums: 2+2=4, 3+3=6.";
const SEND = { sessionKey: ADA, message: "what is 2+2?" };
const sentTexts = (fake: FakeTelegramServer) => fake.sent.map((s) => s.text);

/** The flow's playbook: `killAt` names the step whose model call SIGKILLs the process (none: every step answers). */
function rules(killAt?: string): PlaybookRule[] {
  const then: PlayStep = { text: "asked it" };
  const answer = (when: string, text: string): PlaybookRule => ({
    when,
    first: when === killAt ? ({ kill: true } satisfies PlayStep) : { text },
  });
  return [
    answer(ANNOUNCE, SUMS),
    answer(TURN_2, "6"),
    answer("Turn 1 of 2", "thanks, and 3+3?"),
    answer("Agent-to-agent message context", "4"),
    { when: "please ask Ada's session", first: { toolCalls: [{ name: "sessions_send", input: SEND }] }, then },
    answer("hello there", "hi Ada"),
  ];
}

/** The user lines of a session's history whose text contains `text`. */
async function userLines(gateway: GatewayChild, sessionKey: string, text: string): Promise<unknown[]> {
  const client = await connectGateway(gateway.url);
  try {
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey,
    });
    return history.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes(text));
  } finally {
    await client.close();
  }
}

/** How often the model was called for each rule (`when`) of the playbook, over both lives. */
async function callsPerRule(home: string): Promise<Record<string, number>> {
  const text = await readFile(path.join(home, "play-calls.jsonl"), "utf8");
  const counts: Record<string, number> = {};
  for (const line of text.trim().split("\n")) {
    const when = JSON.parse(line) as string;
    counts[when] = (counts[when] ?? 0) + 1;
  }
  return counts;
}

describeBackends("the agent-to-agent flow after sessions_send, killed mid-flow", (backend) => {
  it.each([
    ["in the target's reply turn 2", TURN_2],
    ["in the announce step", ANNOUNCE],
  ])(
    "SIGKILL %s: after the restart the rest runs once and the announce reaches the chat once",
    async (_name, killAt) => {
      const fake = await startFakeTelegramServer();
      fakes.push(fake);
      const at = await backend.home();
      const env = {
        SB_HOME: at.home,
        ...at.env,
        SB_PLAY_LOG: path.join(at.home, "play-calls.jsonl"),
        SB_API_ROOT: fake.apiRoot,
        SB_CONFIG: JSON.stringify({ session: { agentToAgent: { maxPingPongTurns: 2 } } }),
      };
      const first = await start("platform-gateway-process.ts", { ...env, SB_PLAY: JSON.stringify(rules(killAt)) });
      const exited = new Promise((resolve) => first.process.once("exit", (_code, signal) => resolve(signal)));
      // Ada's session gets its Telegram route; then the web chat session "ops" sends it a question.
      fake.push(adaDm("hello there", 1));
      await until(() => sentTexts(fake).includes("hi Ada"));
      const client = await connectGateway(first.url);
      const { runId } = await client.call<{ runId: string }>("chat.send", {
        sessionKey: OPS,
        message: "please ask Ada's session",
      });
      expect(await client.call("agent.wait", { runId, timeoutMs: 10_000 })).toMatchObject({ text: "asked it" });
      await client.close().catch(() => undefined); // the process may be gone already
      // Ops' turn 1 ran, then the step `killAt` killed the gateway.
      expect(await exited).toBe("SIGKILL");
      expect(sentTexts(fake)).toEqual(["hi Ada"]);

      const second = await start("platform-gateway-process.ts", { ...env, SB_PLAY: JSON.stringify(rules()) });
      await until(() => sentTexts(fake).includes(SUMS));
      await second.idle();
      expect(sentTexts(fake)).toEqual(["hi Ada", SUMS]);
      // Each step's message is in its session once: the primary, ops' turn 1 (asked "4"), Ada's turn 2.
      expect(await userLines(second, ADA, "what is 2+2?")).toHaveLength(1);
      expect(await userLines(second, OPS, '"4"')).toHaveLength(1);
      expect(await userLines(second, ADA, "thanks, and 3+3?")).toHaveLength(1);
      // One model call per step, the killed step's twice (its call that died, its replay); ops' turn
      // twice (the sessions_send call, then its text), Ada's first message once.
      const once = ["hello there", "Agent-to-agent message context", "Turn 1 of 2", TURN_2, ANNOUNCE];
      const expected = Object.fromEntries(once.map((when) => [when, when === killAt ? 2 : 1]));
      expect(await callsPerRule(at.home)).toEqual({ ...expected, "please ask Ada's session": 2 });
    },
    60_000,
  );
});
