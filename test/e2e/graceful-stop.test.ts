// Ctrl-C drains the turns and their answers: a real gateway process with the real Telegram adapter,
// stopped with SIGINT while a Telegram turn and a webhook turn run, delivers both replies before it
// exits; a reply the platform cannot take within the deadline stays in the outbox for the next start.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type GatewayChild, until, useGatewayChildren, gatewayStatus } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

interface Status {
  outbox: { pending: number };
}

const HOOK_TOKEN = "hook-token-for-the-test";
async function postHook(child: { url: string }, body: unknown): Promise<Response> {
  return fetch(`${child.url.replace(/^ws/, "http")}/hooks/agent`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
    body: JSON.stringify(body),
  });
}

function exitOf(child: GatewayChild): Promise<{ code: number | null; at: number }> {
  return new Promise((resolve) => child.process.once("exit", (code) => resolve({ code, at: Date.now() })));
}

describe("a graceful stop (SIGINT)", () => {
  it("delivers the replies of a Telegram turn and a webhook turn that were running, then exits 0", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const steps = [
      { text: "first slow answer", delayMs: 3_000 },
      { text: "second slow answer", delayMs: 3_000 },
    ];
    const child = await start("platform-gateway-process.ts", {
      SB_HOME: await tempHome(),
      SB_API_ROOT: fake.apiRoot,
      SB_STEPS: JSON.stringify(steps),
      SB_HOOK_TOKEN: HOOK_TOKEN,
    });
    fake.push(adaDm("a question", 1));
    await fake.waitFor("sendChatAction"); // the Telegram turn is running: the bot shows it is typing
    const hook = await postHook(child, { message: "a webhook question", to: "telegram:111" });
    expect(hook.status).toBe(202);
    const exited = exitOf(child);
    child.process.kill("SIGINT");
    const { code } = await exited;
    expect(code).toBe(0);
    expect(fake.sent.map((s) => s.text).sort()).toEqual(["first slow answer", "second slow answer"]);
  }, 60_000);

  it("exits after the 10 s deadline when Telegram is unreachable, and the next start delivers the reply once", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const env = {
      SB_HOME: await tempHome(),
      SB_API_ROOT: fake.apiRoot,
      SB_STEPS: JSON.stringify([{ text: "kept for later", delayMs: 1_000 }]),
      SB_RETRY: JSON.stringify({ minDelayMs: 200, maxDelayMs: 1_000 }),
    };
    const child = await start("platform-gateway-process.ts", env);
    fake.failNext("sendMessage", "disconnect");
    fake.push(adaDm("a question", 1));
    await fake.waitFor("sendMessage");
    const outage = fake.goDown(20_000);
    const exited = exitOf(child);
    const signalledAt = Date.now();
    child.process.kill("SIGINT");
    const { code, at } = await exited;
    expect(code).toBe(0);
    // It kept trying while a retry could still fall inside the 10 s budget (retries are at most 1 s
    // apart here), and stopped within that one budget (plus the process's own exit).
    expect(at - signalledAt).toBeGreaterThanOrEqual(8_000);
    expect(at - signalledAt).toBeLessThan(16_000);
    expect(child.stderr()).toContain("stopping with messages not delivered yet");
    await outage;
    const next = await start("platform-gateway-process.ts", env);
    await until(() => fake.sent.some((s) => s.text === "kept for later"), 20_000);
    await until(async () => (await gatewayStatus<Status>(next.url))?.outbox.pending === 0);
    expect(fake.sent.filter((s) => s.text === "kept for later")).toHaveLength(1);
  }, 90_000);
});
