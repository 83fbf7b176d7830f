// A gateway killed (SIGKILL) while Discord holds a reply it already accepted: after the restart the
// outbox sends that piece again with the same nonce, and Discord drops the repeat.
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
});
