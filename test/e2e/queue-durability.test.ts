// The durability of a collected turn (docs/reliability.md), tried with real gateway processes, the
// real Telegram adapter and a fake Bot API: a SIGKILL during the turn that answers two collected
// messages, then restarts: the turn is replayed once, with the same two messages, and answered once.
import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { compiledScript } from "../support/compiled-script.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { readStateFile } from "../support/read-state-file.js";
import { tempHome } from "../support/test-gateway.js";

const SCRIPT = path.resolve(import.meta.dirname, "../fakes/platform-gateway-process.ts");
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Runs a gateway until its turn kills it; resolves with the signal that ended it. */
async function runUntilKilled(env: Record<string, string>): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, [await compiledScript(SCRIPT)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  return new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
}

/** The inbox rows on disk: both pending and tied to one run. */
async function tiedPair(home: string) {
  const inbox = Object.values(await readStateFile(path.join(home, "state", "inbox.json")));
  expect(inbox.map((row) => row.status)).toEqual(["pending", "pending"]);
  expect(new Set(inbox.map((row) => row.turn)).size).toBe(1);
  expect(inbox[0]!.turn).toBeTypeOf("string");
}

describe("a collected or steered turn killed by SIGKILL", () => {
  it("collected: is replayed once after the restart, with the same messages, and answered once", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    // Both arrive in one poll, well within the debounce: one collected turn answers them.
    const env = {
      SB_HOME: home,
      SB_API_ROOT: fake.apiRoot,
      SB_QUEUE: JSON.stringify({ mode: "collect", debounceMs: 1500 }),
    };
    fake.push(adaDm("first part", 1));
    fake.push(adaDm("second part kill-switch", 2));
    // The collected turn's model call (its prompt holds both messages) kills the process.
    expect(await runUntilKilled({ ...env, SB_DIE_ON: "kill-switch" })).toBe("SIGKILL");
    expect(fake.sent).toEqual([]);

    // Both messages were tied to the turn's run on disk before it started.
    await tiedPair(home);

    // Restarted in followup mode: the replay is the turn the messages were tied to, not a new collection.
    const followup = { ...env, SB_QUEUE: "{}" };
    const gateway = await start("platform-gateway-process.ts", followup);
    await until(() => fake.sent.length > 0);
    await gateway.idle();
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: first part\n\nsecond part kill-switch"]);

    // Every entry of the turn was finished with it: a further restart replays nothing.
    await killHard(gateway);
    const again = await start("platform-gateway-process.ts", followup);
    await again.idle();
    expect(fake.sent).toHaveLength(1);
    const rows = Object.values(await readStateFile(path.join(home, "state", "inbox.json")));
    expect(rows.map((row) => row.status)).toEqual(["done", "done"]);
  }, 60_000);

  it("steered: is replayed once after the restart, with the message it was steered by, and answered once", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_QUEUE: JSON.stringify({ mode: "steer" }) };
    // The first step calls a tool after 3 s; the step after it reads the steered message and kills the process.
    const steps = [{ toolCalls: [{ name: "sessions_list", input: {} }], delayMs: 3000 }, { text: "never" }];
    fake.push(adaDm("first part", 1));
    const killed = runUntilKilled({ ...env, SB_STEPS: JSON.stringify(steps), SB_DIE_ON: "kill-switch" });
    // The turn shows typing once it runs: the second message arrives during its first step.
    await fake.waitFor("sendChatAction");
    fake.push(adaDm("second part kill-switch", 2));
    expect(await killed).toBe("SIGKILL");
    expect(fake.sent).toEqual([]);
    // The steered message was tied to the run before the model read it.
    await tiedPair(home);

    const gateway = await start("platform-gateway-process.ts", { ...env, SB_QUEUE: "{}" });
    await until(() => fake.sent.length > 0);
    await gateway.idle();
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: first part\n\nsecond part kill-switch"]);
  }, 60_000);
});
