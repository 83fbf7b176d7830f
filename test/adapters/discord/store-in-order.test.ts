// A Discord message the core could not store (adapters/discord/store-in-order.ts and the keeper in
// gateway-session.ts): tried again in order, so one store failure costs nothing; one never stored
// keeps the stored session before it (the next holder's RESUME gives it back) only for a bound, then
// it is logged as lost and the row moves on: the row is never pinned for the process's life.
import { describe, expect, it } from "vitest";
import { type StoredSession, sessionKeeper, type SessionKeeper } from "../../../adapters/discord/gateway-session.js";
import { replayStoredSession } from "../../../adapters/discord/replay-session.js";
import { SESSION_LIMITS, storeInOrder } from "../../../adapters/discord/store-in-order.js";
import type { ChannelRows } from "../../../src/index.js";
import { createGatewayMetrics } from "../../../src/gateway/metrics/gateway-metrics.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { DISCORD_BOT } from "../../fakes/fake-discord-server.js";
import { createManualClock } from "../../fakes/manual-clock.js";
import { scrape } from "../../support/scrape.js";
import { type DiscordHarness, useDiscordHarness } from "./discord-harness.js";

const harness = useDiscordHarness();
const KEY = "gatewaySession";
const rowOf = (h: DiscordHarness) => h.context.state.rows("default").get(KEY) as StoredSession;
const following = (count: number) => Array.from({ length: count }, (_, i) => `after ${i + 1}`);

/** What the next holder's RESUME of the stored row gives (the holder stopped, its session kept). */
async function replayOfRow(h: DiscordHarness): Promise<string[]> {
  const again = await replayStoredSession(rowOf(h), DISCORD_BOT.token, {
    logger: createMemoryLogger(),
    accountId: "x",
  });
  return again.messages.map((m) => (m as { content: string }).content);
}

describe("a Discord message the core could not store", () => {
  it("is stored by its next try, in order: after it and 50 more, the stored session is past them all and a new holder replays nothing", async () => {
    let refused = 0;
    const h = await harness({
      beforeReceive: async (message) => {
        if (message.text === "refused once" && refused++ === 0) throw new Error("connection reset");
      },
    });
    const texts = ["refused once", ...following(50)];
    for (const text of texts) h.fake.dispatch("MESSAGE_CREATE", h.fake.dm(text));
    expect((await h.waitForReceived(51)).map((r) => r.message.text)).toEqual(texts);
    await h.adapter.stop();
    // READY 1, GUILD_CREATE 2, the 51 messages 3-53.
    expect(rowOf(h).seq).toBe(53);
    expect(await replayOfRow(h)).toEqual([]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("discord message not stored") }),
    );
  });

  it("never stored: after its tries it holds the stored session before it for the bound only (50 messages here), then is logged and counted as lost and the row moves on", async () => {
    // The gateway's metrics, as the core lends them to the adapter at start.
    const metrics = createGatewayMetrics();
    const lostCount = async () =>
      (await scrape({ text: metrics.scrape })).value("switchboard_inbound_lost_messages_total", {
        channel: "discord",
        account: "default",
      });
    const h = await harness({
      inboundLost: (accountId, count) => metrics.inboundLost("discord", accountId, count),
      sessionLimits: { retriesMs: [1, 1], freeze: { messages: 50, ms: 600_000 } },
      beforeReceive: async (message) => {
        if (message.text === "never stored") throw new Error("disk full");
      },
    });
    const never = h.fake.dm("never stored");
    h.fake.dispatch("MESSAGE_CREATE", never);
    for (const text of following(49)) h.fake.dispatch("MESSAGE_CREATE", h.fake.dm(text));
    await h.waitForReceived(49);
    // Frozen, not yet lost: a restart now would replay it.
    expect(await lostCount()).toBe(0);
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("after 50"));
    await h.waitForReceived(50);
    await h.adapter.stop();
    expect(await lostCount()).toBe(1);
    expect(rowOf(h).seq).toBe(53);
    expect(await replayOfRow(h)).toEqual([]);
    const failures = h.logger.records.filter((r) => r.message.startsWith("discord message not stored"));
    // Three tries, each logged, then the freeze.
    expect(failures.map((r) => r.level)).toEqual(["warn", "warn", "warn", "error"]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: expect.stringContaining("discord message lost"),
        fields: expect.objectContaining({ messageIds: [never.id], handled: 50 }),
      }),
    );
  });
});

/** Channel rows in memory, with every write recorded. */
function memoryRows(): ChannelRows & { writes: StoredSession[] } {
  const writes: StoredSession[] = [];
  return {
    writes,
    get: () => undefined,
    savedAt: () => undefined,
    keys: () => [],
    async write(changes) {
      writes.push(changes[KEY] as StoredSession);
    },
  };
}

describe("the stored session's freeze", () => {
  const started = (keeper: SessionKeeper) => keeper.started("s", "wss://gateway.discord.gg", 2);

  it("stays before a message never stored until that many messages are handled after it, then counts it lost once", async () => {
    const rows = memoryRows();
    const logger = createMemoryLogger();
    const counted: number[] = [];
    const countLost = (count: number) => void counted.push(count);
    const keeper = sessionKeeper(rows, { logger, accountId: "a", countLost }, { freeze: { messages: 3, ms: 600_000 } });
    started(keeper);
    keeper.handled(3);
    keeper.lost("m4");
    keeper.handled(5);
    keeper.handled(6);
    await keeper.flushed();
    expect(rows.writes.at(-1)?.seq).toBe(3);
    expect(counted).toEqual([]);
    keeper.handled(7);
    await keeper.flushed();
    expect(rows.writes.at(-1)).toEqual({ sessionId: "s", resumeUrl: "wss://gateway.discord.gg", seq: 7 });
    expect(counted).toEqual([1]);
    // A later failure freezes it again, afresh.
    keeper.lost("m8");
    keeper.handled(9);
    await keeper.flushed();
    expect(rows.writes.at(-1)?.seq).toBe(7);
    expect(counted).toEqual([1]);
  });

  it("stays before it for the bound's time at most, then moves to the latest session", async () => {
    const rows = memoryRows();
    const clock = createManualClock();
    const keeper = sessionKeeper(
      rows,
      { logger: createMemoryLogger(), accountId: "a" },
      { freeze: SESSION_LIMITS.freeze, now: clock.now },
    );
    started(keeper);
    keeper.lost("m3");
    // A new session while frozen (discord.js identified again) is not written either.
    keeper.started("s2", "wss://gateway.discord.gg", 1);
    keeper.handled(2);
    clock.advance(SESSION_LIMITS.freeze.ms - 1);
    keeper.handled(3);
    await keeper.flushed();
    expect(rows.writes.map((w) => [w.sessionId, w.seq])).toEqual([["s", 2]]);
    clock.advance(1);
    keeper.handled(4);
    await keeper.flushed();
    expect(rows.writes.at(-1)).toEqual({ sessionId: "s2", resumeUrl: "wss://gateway.discord.gg", seq: 4 });
  });
});

/** A keeper that only records what it was told. */
function recordingKeeper() {
  const calls: string[] = [];
  const keeper: SessionKeeper = {
    stored: () => undefined,
    started: () => undefined,
    handled: (seq) => void calls.push(`handled ${seq}`),
    lost: (id) => void calls.push(`lost ${id}`),
    flushed: async () => undefined,
  };
  return { keeper, calls };
}

describe("storeInOrder: one way for live and replayed messages", () => {
  const message = { id: "m1" };

  it("keeps the row before a message whose handling throws, and lets the error through (L2: a replayed message as a live one)", async () => {
    const { keeper, calls } = recordingKeeper();
    const store = storeInOrder(
      keeper,
      async () => {
        throw new Error("no channel");
      },
      { retriesMs: [1], stopping: new AbortController().signal },
    );
    await expect(store(message)).rejects.toThrow("no channel");
    await expect(store(message, 7)).rejects.toThrow("no channel");
    expect(calls).toEqual(["lost m1", "lost m1"]);
  });

  it("tries again after each wait until stored, then moves the row past a live message's sequence", async () => {
    const { keeper, calls } = recordingKeeper();
    let tries = 0;
    const store = storeInOrder(keeper, async () => ++tries === 3, {
      retriesMs: [1, 1, 1],
      stopping: new AbortController().signal,
    });
    await store(message, 9);
    expect([tries, calls]).toEqual([3, ["handled 9"]]);
  });

  it("tries once only while the account stops, and a stop during a wait ends the tries", async () => {
    const { keeper, calls } = recordingKeeper();
    const stopped = new AbortController();
    stopped.abort();
    let tries = 0;
    const refused = async () => {
      tries++;
      return false;
    };
    await storeInOrder(keeper, refused, { retriesMs: [1, 1], stopping: stopped.signal })(message);
    expect([tries, calls]).toEqual([1, ["lost m1"]]);
    const stopping = new AbortController();
    tries = 0;
    const store = storeInOrder(
      keeper,
      async () => {
        tries++;
        stopping.abort();
        return false;
      },
      { retriesMs: [60_000], stopping: stopping.signal },
    );
    await store(message, 4);
    expect([tries, calls]).toEqual([1, ["lost m1", "lost m1"]]);
  });
});
