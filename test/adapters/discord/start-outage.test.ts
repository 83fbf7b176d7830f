// docs/discord.md "Start during an outage": a receiving account whose login fails because Discord is
// away (REST 5xx, no connection) starts anyway, not connected, and logs in in the background with
// the login backoff; a message sent meanwhile reaches the core once it is back (the stored session's
// RESUME replays it). A refusal (401, the Message Content intent) still fails the start
// (./discord-adapter.test.ts).
import { describe, expect, it } from "vitest";
import { createDiscordAdapter } from "../../../adapters/discord/index.js";
import { DiscordConfigSchema } from "../../../adapters/discord/discord-config.js";
import { accountStates } from "../../../src/gateway/account-states.js";
import { readinessReport } from "../../../src/gateway/readiness.js";
import type { InboundMessage } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { DISCORD_BOT, WORLD, dmChannelOf } from "../../fakes/fake-discord-server.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { type DiscordHarness, useDiscordHarness } from "./discord-harness.js";

const harness = useDiscordHarness();
const closers = closersAfterEach();

/** A second Discord adapter on the harness's fake and channel state: the account's next holder. */
async function nextHolder(h: DiscordHarness) {
  const logger = createMemoryLogger();
  const config = DiscordConfigSchema.parse({ token: DISCORD_BOT.token, apiRoot: h.fake.apiRoot });
  const adapter = createDiscordAdapter(config, {
    env: {},
    logger,
    readyTimeoutMs: 5_000,
    loginBackoff: { minMs: 50, maxMs: 200 },
  });
  const received: InboundMessage[] = [];
  await adapter.start(async (message) => void received.push(message), h.context);
  closers.push(() => adapter.stop());
  const readiness = () => {
    const states = accountStates([adapter], { channels: { discord: { token: DISCORD_BOT.token } } }, true);
    return readinessReport("ready", states, []).parts.filter((p) => p.kind === "channel");
  };
  return { adapter, received, logger, readiness };
}

describe("a receiving Discord account started while Discord is away", () => {
  it("starts not connected (readiness says why), logs in once Discord answers, takes in what was sent meanwhile and answers it", async () => {
    const h = await harness();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("before"));
    await h.waitForReceived(1);
    await h.adapter.stop(); // the stored session stays: the next holder resumes it
    h.fake.restDown(502);
    const next = await nextHolder(h);
    expect(next.adapter.accountHealth?.("default")).toMatchObject({
      connected: false,
      lastError: expect.stringContaining("Discord not reached at start"),
    });
    expect(next.readiness().map((p) => [p.name, p.ok])).toEqual([["discord/default", false]]);
    expect(next.readiness()[0]?.reason).toMatch(/GET 502/);
    const reply = () => next.adapter.send({ channel: "discord", to: `user:${WORLD.ada.id}` }, { text: "answer" });
    await expect(reply()).rejects.toMatchObject({ retryable: true });
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("during the outage"));
    h.fake.restUp();
    await expect.poll(() => next.received.map((m) => m.text), { timeout: 10_000 }).toEqual(["during the outage"]);
    await expect.poll(() => next.adapter.accountHealth?.("default")).toBeUndefined();
    expect(next.readiness().map((p) => [p.ok, p.reason])).toEqual([[true, "connected"]]);
    await reply();
    expect(h.fake.sent.map((s) => [s.channelId, s.content])).toEqual([[dmChannelOf(WORLD.ada.id), "answer"]]);
    expect(next.logger.records.map((r) => r.message)).toContain(
      "discord unreachable at start: starting not connected, logging in in the background",
    );
  });

  it("stops trying to log in when stopped: the next holder is the only one to log in", async () => {
    const h = await harness({ start: false });
    h.fake.restDown(502);
    await h.start();
    const before = h.fake.outageAnswered();
    await expect.poll(() => h.fake.outageAnswered()).toBeGreaterThan(before); // it tried again
    await h.adapter.stop();
    h.fake.restUp();
    const next = await nextHolder(h);
    expect(next.adapter.accountHealth?.("default")).toBeUndefined();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("after"));
    await expect.poll(() => next.received.map((m) => m.text)).toEqual(["after"]);
    expect(h.received).toEqual([]);
    expect(h.fake.logins.map((l) => l.kind)).toEqual(["identify"]);
    expect(h.fake.secondConnections()).toBe(0);
  });
});
