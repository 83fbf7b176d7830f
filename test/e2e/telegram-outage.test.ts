// The outbox promise of docs/reliability.md, tried from outside: a real gateway process with the real
// Telegram adapter, and a fake Bot API that refuses connections (60 s) or answers 502 (45 s) while a
// reply comes due. The reply must arrive once Telegram is back, exactly once, also across a SIGKILL
// and restart in the middle of the outage; a final refusal (400 "chat not found") ends the item at once.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { gatewayStatus, until } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";
import { compiledScript } from "../support/compiled-script.js";

// The default backoff (500 ms doubling) with its ceiling lowered from 30 s to 5 s, so the test waits
// at most 5 s after the outage; the retry window is the default 12 hours.
const RETRY = JSON.stringify({ minDelayMs: 500, maxDelayMs: 5_000 });
const SCRIPT = path.resolve(import.meta.dirname, "../fakes/platform-gateway-process.ts");

interface Gateway {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

interface OutboxStatus {
  outbox: { pending: number; failures: Array<{ lastError?: { reason: string } }> };
}

/** One scenario's own fake, home and gateway processes, all stopped when it ends (tests run concurrently). */
async function scenario(run: (s: { fake: FakeTelegramServer; start: () => Promise<Gateway> }) => Promise<void>) {
  const fake = await startFakeTelegramServer();
  const home = await tempHome();
  const children: ChildProcess[] = [];
  const start = async () => {
    const bundle = await compiledScript(SCRIPT);
    return new Promise<Gateway>((resolve, reject) => {
      const child = spawn(process.execPath, [bundle], {
        env: { ...process.env, SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_RETRY: RETRY },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdout!.on("data", (chunk: Buffer) => {
        const url = /url (\S+)/.exec(chunk.toString())?.[1];
        if (url) resolve({ child, url, stderr: () => stderr });
      });
      child.once("exit", (code) => reject(new Error(`gateway exited early (${code}): ${stderr.slice(-2000)}`)));
    });
  };
  try {
    await run({ fake, start });
  } finally {
    for (const child of children) child.kill("SIGKILL");
    await fake.close();
  }
}

const timesSent = (fake: FakeTelegramServer, text: string) => fake.sent.filter((s) => s.text === text).length;
const status = (gateway: Gateway) => gatewayStatus<OutboxStatus>(gateway.url);

/** Waits until the gateway's outbox holds nothing pending: no send is left that could still go out. */
async function outboxDrained(gateway: Gateway): Promise<OutboxStatus> {
  let last: OutboxStatus | undefined;
  await until(async () => {
    last = await status(gateway);
    return last?.outbox.pending === 0;
  }, 20_000);
  return last!;
}

describe("the outbox through a Telegram outage", () => {
  it.concurrent(
    "delivers a reply that came due while Telegram refused connections for 60 s, once, after it is back",
    () =>
      scenario(async ({ fake, start }) => {
        const gateway = await start();
        fake.failNext("sendMessage", "disconnect"); // the reply's first try meets the start of the outage
        fake.push(adaDm("during the outage", 1));
        await fake.waitFor("sendMessage");
        await fake.goDown(60_000);
        await until(() => timesSent(fake, "Echo: during the outage") > 0, 20_000);
        const after = await outboxDrained(gateway);
        expect(timesSent(fake, "Echo: during the outage")).toBe(1);
        expect(after.outbox.failures).toEqual([]);
        expect(gateway.stderr()).not.toContain('"delivery failed"');
      }),
    120_000,
  );

  it.concurrent(
    "delivers a reply that came due while Telegram answered 502 for 45 s, once, after many tries",
    () =>
      scenario(async ({ fake, start }) => {
        const gateway = await start();
        const outage = fake.failFor("sendMessage", { error_code: 502, description: "Bad Gateway" }, 45_000);
        fake.push(adaDm("behind a 502", 1));
        await outage;
        await until(() => timesSent(fake, "Echo: behind a 502") > 0, 20_000);
        const after = await outboxDrained(gateway);
        expect(timesSent(fake, "Echo: behind a 502")).toBe(1);
        // The old behaviour gave up after 3 tries within a second; the backoff keeps trying through the outage.
        expect(fake.callsTo("sendMessage").length).toBeGreaterThan(5);
        expect(after.outbox.failures).toEqual([]);
      }),
    120_000,
  );

  it.concurrent(
    "delivers once after a SIGKILL and restart in the middle of a 60 s outage",
    () =>
      scenario(async ({ fake, start }) => {
        const first = await start();
        fake.failNext("sendMessage", "disconnect");
        fake.push(adaDm("across a restart", 1));
        await fake.waitFor("sendMessage");
        const outageStart = Date.now();
        const outage = fake.goDown(60_000);
        await until(async () => (await status(first))?.outbox.pending === 1);
        await until(() => Date.now() >= outageStart + 20_000, 30_000); // the middle of the outage
        first.child.kill("SIGKILL");
        await new Promise((resolve) => first.child.once("exit", resolve));
        const second = await start(); // starts while Telegram is still unreachable
        await outage;
        await until(() => timesSent(fake, "Echo: across a restart") > 0, 20_000);
        const after = await outboxDrained(second);
        expect(timesSent(fake, "Echo: across a restart")).toBe(1);
        expect(after.outbox.failures).toEqual([]);
      }),
    120_000,
  );

  it.concurrent(
    "ends an item Telegram refuses for good (400 chat not found) at once, shows it in /status, and holds nothing back",
    () =>
      scenario(async ({ fake, start }) => {
        const gateway = await start();
        fake.failNext("sendMessage", { error_code: 400, description: "Bad Request: chat not found" });
        fake.push(adaDm("refused", 1));
        await until(async () => (await status(gateway))?.outbox.failures.length === 1);
        expect(fake.callsTo("sendMessage")).toHaveLength(1);
        expect((await status(gateway))!.outbox.failures[0]!.lastError?.reason).toBe("chat_not_found");
        fake.push(adaDm("/status", 2));
        await until(() => fake.sent.some((s) => s.text.includes("Delivery failures: 1")));
        expect(fake.sent.find((s) => s.text.includes("Delivery failures"))!.text).toContain("chat_not_found");
      }),
    60_000,
  );
});
