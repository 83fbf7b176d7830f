import { describe, expect, it } from "vitest";
import { createDiscordAdapter } from "../../../adapters/discord/index.js";
import { DiscordConfigSchema } from "../../../adapters/discord/discord-config.js";
import { type AdapterStartContext, DeliveryError, ErrorCodes } from "../../../src/index.js";
import { accountStates } from "../../../src/gateway/account-states.js";
import { SEND_ONLY_REASON, readinessReport } from "../../../src/gateway/readiness.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { DISCORD_BOT, WORLD, dmChannelOf, startFakeDiscord } from "../../fakes/fake-discord-server.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { useDiscordHarness } from "./discord-harness.js";

const harness = useDiscordHarness();
const closers = closersAfterEach();
const COMMANDS = [{ name: "status", summary: "Show the session" }];

/** A start context whose channel state throws when touched: a send-only start reads and writes none. */
function sendOnlyContext(held: string[]): AdapterStartContext {
  return {
    state: {
      readOnly: false,
      rows: () => {
        throw new Error("a send-only adapter touched the channel state");
      },
    },
    receive: false,
    holdAccount: async (accountId) => void held.push(accountId),
  };
}

/** A Discord adapter started send-only on the fake at `apiRoot`; `held` collects the accounts it asked to hold. */
async function sendOnlyAdapter(apiRoot: string, fields: Record<string, unknown> = {}) {
  const config = DiscordConfigSchema.parse({ token: DISCORD_BOT.token, apiRoot, ...fields });
  const adapter = createDiscordAdapter(config, { env: {}, logger: createMemoryLogger(), commands: COMMANDS });
  const held: string[] = [];
  closers.push(() => adapter.stop());
  await adapter.start(async () => expect.fail("a send-only adapter hands nothing in"), sendOnlyContext(held));
  return { adapter, held };
}

describe("a send-only Discord adapter (cluster.owners many: another gateway holds the bot)", () => {
  it("sends with nonces to a channel, a thread and a DM over REST, never connecting to the gateway beside the holder", async () => {
    const holder = await harness({ commands: COMMANDS });
    const { fake } = holder;
    const { adapter, held } = await sendOnlyAdapter(fake.apiRoot);
    const long = `${"a".repeat(1500)}\n${"b".repeat(1500)}`;
    await adapter.send({ channel: "discord", to: WORLD.general }, { text: long, idempotencyKey: "out-1#0" });
    // The same piece again (a resend after a crash during its send): Discord drops it by its nonce.
    await adapter.send({ channel: "discord", to: WORLD.general }, { text: long, idempotencyKey: "out-1#0" });
    await adapter.send({ channel: "discord", to: `channel:${WORLD.thread}` }, { text: "in the thread" });
    await adapter.send({ channel: "discord", to: `user:${WORLD.ada.id}` }, { text: "a DM" });
    await adapter.typing({ channel: "discord", to: WORLD.thread });
    expect(fake.sent.map((s) => [s.channelId, s.content.length, s.nonce !== undefined])).toEqual([
      [WORLD.general, 1500, true],
      [WORLD.general, 1500, true],
      [WORLD.thread, "in the thread".length, false],
      [dmChannelOf(WORLD.ada.id), "a DM".length, false],
    ]);
    expect(fake.nonceRepeats()).toBe(2);
    expect(fake.typing).toEqual([WORLD.thread]);
    // One connection, one IDENTIFY, one slash-command registration: the holder's alone.
    expect(held).toEqual([]);
    expect(fake.logins.map((l) => l.kind)).toEqual(["identify"]);
    expect(fake.connections()).toBe(1);
    expect(fake.secondConnections()).toBe(0);
    expect(fake.commandPuts).toHaveLength(1);
    // The holder still receives.
    fake.dispatch("MESSAGE_CREATE", fake.dm("still here"));
    expect((await holder.waitForReceived(1)).map((r) => r.message.text)).toEqual(["still here"]);
  });

  it("reports each account send-only, leaves no connection after a stop, and fails the start with the holder's error on a rejected token", async () => {
    const { fake } = await harness({ start: false });
    const { adapter } = await sendOnlyAdapter(fake.apiRoot);
    expect(adapter.accountHealth?.("default")).toEqual({ connected: true, sendOnly: true });
    await adapter.send({ channel: "discord", to: `user:${WORLD.bob.id}` }, { text: "hi Bob" });
    // A stop leaves no connection open (the gateway reopens its adapters when its partitions change):
    // REST's idle keep-alive sockets close within undici's keep-alive timeout, as the holder's do (the contract's bound).
    await adapter.stop();
    await expect.poll(() => fake.openConnections(), { timeout: 10_000 }).toBe(0);
    const refused = createDiscordAdapter(DiscordConfigSchema.parse({ token: "wrong", apiRoot: fake.apiRoot }), {
      env: {},
      logger: createMemoryLogger(),
    });
    await expect(refused.start(async () => undefined, sendOnlyContext([]))).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringContaining("Discord rejected the bot token of channels.discord"),
    });
    expect(fake.connections()).toBe(0);
  });

  it("starts while Discord's REST answers 5xx, reports the account not connected, and the pending reply goes out once Discord is back", async () => {
    const { fake } = await harness({ start: false });
    fake.restDown(502);
    const { adapter } = await sendOnlyAdapter(fake.apiRoot);
    expect(adapter.accountHealth?.("default")).toMatchObject({ connected: false, sendOnly: true });
    expect(adapter.accountHealth?.("default")?.lastError).toContain("send-only, Discord not reached yet");
    const readiness = () => {
      const states = accountStates([adapter], { channels: { discord: { token: DISCORD_BOT.token } } }, true);
      return readinessReport("ready", states, []).parts.filter((p) => p.kind === "channel");
    };
    expect(readiness()).toEqual([
      {
        kind: "channel",
        name: "discord/default",
        ok: false,
        reason: expect.stringMatching(/^send-only, Discord not reached yet \(sends are retried\): GET 502/),
      },
    ]);
    const reply = () => adapter.send({ channel: "discord", to: `user:${WORLD.ada.id}` }, { text: "the reply" });
    // The delivery gate retries a retryable failure, as any failed send.
    const failed = await reply().catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(DeliveryError);
    expect(failed).toMatchObject({ retryable: true, message: expect.stringContaining("Discord server error") });
    fake.restUp();
    await reply();
    expect(fake.sent.map((s) => [s.channelId, s.content])).toEqual([[dmChannelOf(WORLD.ada.id), "the reply"]]);
    expect(adapter.accountHealth?.("default")).toEqual({ connected: true, sendOnly: true });
    expect(readiness().map((p) => [p.ok, p.reason])).toEqual([[true, SEND_ONLY_REASON]]);
  });

  it("starts while Discord refuses connections, and sends once it listens again", async () => {
    const first = await startFakeDiscord();
    const port = Number(new URL(first.apiRoot).port);
    await first.close();
    const { adapter } = await sendOnlyAdapter(`http://127.0.0.1:${port}/api`);
    const reply = () => adapter.send({ channel: "discord", to: WORLD.general }, { text: "late but sent" });
    await expect(reply()).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining("Discord unreachable"),
    });
    expect(adapter.accountHealth?.("default")).toMatchObject({ connected: false, sendOnly: true });
    const back = await startFakeDiscord({ port });
    closers.push(() => back.close());
    await reply();
    expect(back.sent.map((s) => [s.channelId, s.content])).toEqual([[WORLD.general, "late but sent"]]);
  });
});
