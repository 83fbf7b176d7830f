// A gateway killed (SIGKILL) while Discord holds a reply it already accepted: after the restart the
// outbox sends that piece again with the same nonce, and Discord drops the repeat. And a gateway
// killed on local files (the session row in state/channels.json): restarted on the same home, it
// IDENTIFYs, RESUMEs the dead process's session and answers what was sent while it was down, and
// during its handover, once each (docs/discord.md). The same across a clean stop (SIGTERM): it
// closes the session so that Discord keeps it, and stores it past the last message it stored.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeDiscord, startFakeDiscord } from "../fakes/fake-discord-server.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeDiscord[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

describe("Discord across a crash", () => {
  it("delivers every reply exactly once when the gateway is SIGKILLed after Discord accepted a piece", async () => {
    const fake = await startFakeDiscord({ sendDelayMs: 400 });
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot };
    let child = await start("platform-gateway-process.ts", env);
    const answered = (text: string) => fake.sent.filter((s) => s.content === `Echo: ${text}`).length;
    for (const i of [1, 2, 3]) {
      const text = `message ${i}`;
      fake.dispatch("MESSAGE_CREATE", fake.dm(text));
      await until(() => answered(text) === 1, 30_000);
      if (i === 2) {
        // Discord has the reply; the gateway never hears back.
        await killHard(child);
        child = await start("platform-gateway-process.ts", env);
        await until(() => fake.nonceRepeats() === 1, 30_000);
      }
    }
    await child.idle(); // nothing left to send: a repeat would have been sent by now
    expect(fake.sent.map((s) => s.content)).toEqual([1, 2, 3].map((i) => `Echo: message ${i}`));
    expect(fake.nonceRepeats()).toBe(1);
  }, 120_000);

  it("answers once each DM sent while it was SIGKILLed and during its restart's handover: the restart identifies, then resumes the dead session", async () => {
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot };
    const child = await start("platform-gateway-process.ts", env);
    const answered = (text: string) => fake.sent.filter((s) => s.content === `Echo: ${text}`).length;
    fake.dispatch("MESSAGE_CREATE", fake.dm("before the kill"));
    await until(() => answered("before the kill") === 1, 30_000);
    await child.idle(); // its session row is stored past that message
    const killedAt = Date.now();
    await killHard(child);
    const texts = ["down 1", "down 2", "down 3"];
    for (const text of texts) fake.dispatch("MESSAGE_CREATE", fake.dm(text));
    // And one at every step of the restart's connections (its own, then the replay's).
    fake.onStep((step) => {
      texts.push(`at ${step} ${texts.length - 2}`);
      fake.dispatch("MESSAGE_CREATE", fake.dm(texts.at(-1)!));
    });
    const restarted = await start("platform-gateway-process.ts", env);
    await until(() => texts.every((text) => answered(text) >= 1), 30_000);
    await restarted.idle(); // a second answer would have been sent by now
    expect(texts.slice(3)).toEqual(["at connect 1", "at identify 2", "at connect 3", "at resume 4"]);
    expect(texts.map(answered)).toEqual(texts.map(() => 1));
    expect(answered("before the kill")).toBe(1);
    const after = fake.logins.filter((l) => l.at >= killedAt);
    expect(after.map((l) => l.kind)).toEqual(["identify", "resume"]);
    expect(after[1]!.replayed).toBeGreaterThanOrEqual(3);
    expect(fake.secondConnections()).toBe(0);
  }, 120_000);

  it("answers once each DM sent during a SIGTERM's drain and while it was stopped: the stop leaves its session resumable, the restart resumes it", async () => {
    // Each reply is answered 600 ms after it is shown: the stop's drain waits for the one in flight.
    const fake = await startFakeDiscord({ sendDelayMs: 600 });
    fakes.push(fake);
    const env = { SB_HOME: await tempHome(), SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot };
    const child = await start("platform-gateway-process.ts", env);
    const answered = (text: string) => fake.sent.filter((s) => s.content === `Echo: ${text}`).length;
    fake.dispatch("MESSAGE_CREATE", fake.dm("before the stop"));
    await until(() => answered("before the stop") === 1, 30_000);
    const exited = new Promise<number | null>((resolve) => child.process.once("exit", resolve));
    child.process.kill("SIGTERM");
    // Every 50 ms until it exited: stored unhandled by the draining core (the restart's inbox replays
    // them), or kept by Discord after the close (the restart's RESUME replays them).
    const texts: string[] = [];
    const during = setInterval(() => {
      texts.push(`during the stop ${texts.length + 1}`);
      fake.dispatch("MESSAGE_CREATE", fake.dm(texts.at(-1)!));
    }, 50);
    expect(await exited.finally(() => clearInterval(during))).toBe(0);
    expect(child.stderr()).not.toContain("discord message not stored");
    const stoppedAt = Date.now();
    expect(fake.connections()).toBe(0);
    texts.push("down 1", "down 2");
    for (const text of texts.slice(-2)) fake.dispatch("MESSAGE_CREATE", fake.dm(text));
    const restarted = await start("platform-gateway-process.ts", env);
    await until(() => texts.every((text) => answered(text) >= 1), 60_000);
    await restarted.idle(); // a second answer would have been sent by now
    expect(["before the stop", ...texts].map(answered)).toEqual(["before the stop", ...texts].map(() => 1));
    const after = fake.logins.filter((l) => l.at >= stoppedAt);
    // Its own session, then the stopped one's resumed from the last message it stored: every one
    // after it (those sent once the socket closed), none the drain stored (those came from the inbox).
    expect(after.map((l) => l.kind)).toEqual(["identify", "resume"]);
    const resumed = after[1]!.replayed;
    expect(resumed).toBeGreaterThanOrEqual(2);
    expect(resumed).toBeLessThan(texts.length);
    expect(fake.secondConnections()).toBe(0);
    process.stderr.write(
      `discord SIGTERM: ${texts.length - 2} DMs during the stop, ${texts.length - resumed} stored by the drain, ${resumed} resumed\n`,
    );
  }, 120_000);
});
