// The Discord account's gateway session in the channel state (adapters/discord/gateway-session.ts,
// replay-session.ts): a new holder IDENTIFYs, then RESUMEs the session a dead holder left and hands
// what Discord replays before anything live (a message sent at any step of the handover is handed,
// the overlap dropped by its dedupe key as the inbox does); a session Discord no longer knows (ended,
// expired) costs nothing but one warning; a replay connection that fails is tried again; an
// unreadable or hostile row is ignored with a warning; a clean stop leaves the session resumable,
// stored past the last message stored, and the next start replays what was sent in between.
import { describe, expect, it, onTestFinished } from "vitest";
import { identifyRaw } from "../../fakes/fake-discord-gateway.js";
import { DISCORD_BOT, type FakeDiscord } from "../../fakes/fake-discord-server.js";
import type { StoredSession } from "../../../adapters/discord/gateway-session.js";
import { replayStoredSession } from "../../../adapters/discord/replay-session.js";
import { SESSION_LIMITS } from "../../../adapters/discord/store-in-order.js";
import type { ChannelRows } from "../../../src/index.js";
import { inboundDedupeKey } from "../../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createManualClock } from "../../fakes/manual-clock.js";
import { until } from "../../support/gateway-child.js";
import { type DiscordHarness, useDiscordHarness } from "./discord-harness.js";
import { silentGateway } from "./silent-gateway.js";

const harness = useDiscordHarness();
const KEY = "gatewaySession";

/** A holder that connected and died: it IDENTIFYs, records its session, and drops the connection without a close. */
async function deadHolder(fake: FakeDiscord, rows: ChannelRows): Promise<string> {
  const holder = await identifyRaw(fake.apiRoot, DISCORD_BOT.token);
  // READY and GUILD_CREATE were handled: it resumes after 2.
  await rows.write({ [KEY]: { sessionId: holder.sessionId, resumeUrl: holder.resumeUrl, seq: 2 } });
  holder.ws.terminate();
  await until(() => fake.connections() === 0, 5_000);
  return holder.sessionId;
}

const rowsOf = (h: DiscordHarness) => h.context.state.rows("default");
/** The messages of every warning the account logged. */
const warnings = (h: DiscordHarness) => h.logger.records.filter((r) => r.level === "warn").map((r) => r.message);

/** Starts the account on a stored `row` it cannot resume: it has only its own session, and takes live messages. */
async function startWithRow(row: (fake: FakeDiscord) => unknown): Promise<DiscordHarness> {
  const h = await harness({ start: false });
  await rowsOf(h).write({ [KEY]: row(h.fake) });
  await h.start();
  h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("hello"));
  expect((await h.waitForReceived(1)).map((r) => r.message.text)).toEqual(["hello"]);
  expect(h.fake.logins.map((l) => l.kind)).toEqual(["identify"]);
  return h;
}

describe("the Discord gateway session in the channel state", () => {
  it("RESUMEs the session a dead holder left, hands what Discord replays before live messages, then keeps a session of its own", async () => {
    const h = await harness({ start: false });
    const deadSession = await deadHolder(h.fake, rowsOf(h));
    // Sent while no one was connected: Discord keeps them for the dead session only.
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("sent in the gap 1"));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("sent in the gap 2"));
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    const received = await h.waitForReceived(3);
    expect(received.map((r) => r.message.text)).toEqual(["sent in the gap 1", "sent in the gap 2", "live"]);
    expect(h.fake.logins.map((l) => [l.kind, l.replayed])).toEqual([
      ["identify", 0],
      ["identify", 0],
      ["resume", 2],
    ]);
    expect(h.fake.secondConnections()).toBe(0);
    // Its own session, stored past the live message (READY 1, GUILD_CREATE 2, the message 3).
    const own = h.fake.logins[1]!.sessionId;
    await until(() => JSON.stringify(rowsOf(h).get(KEY)).includes(`"seq":3`), 5_000);
    expect(rowsOf(h).get(KEY)).toEqual({ sessionId: own, resumeUrl: expect.stringMatching(/^ws:/), seq: 3 });
    expect(own).not.toBe(deadSession);
  });

  it("keeps the dead holder's session stored until the replayed messages are stored: a holder dying before that leaves them to the next", async () => {
    let storing!: () => void;
    const blocked = new Promise<void>((resolve) => (storing = resolve));
    const h = await harness({ start: false, beforeReceive: () => blocked });
    const deadSession = await deadHolder(h.fake, rowsOf(h));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("sent in the gap"));
    await h.start();
    // Connected with a session of its own, the replayed message not yet stored: the row still names the dead session.
    expect(h.fake.logins.map((l) => l.kind)).toEqual(["identify", "identify", "resume"]);
    const left = rowsOf(h).get(KEY) as StoredSession;
    expect(left.sessionId).toBe(deadSession);
    // The next holder (this one dead now) resumes it again: the replay's close kept it resumable.
    const again = await replayStoredSession(left, DISCORD_BOT.token, { logger: createMemoryLogger(), accountId: "x" });
    expect([again.end, again.messages.length]).toEqual(["resumed", 1]);
    storing();
    await h.waitForReceived(1);
    await until(() => (rowsOf(h).get(KEY) as StoredSession).sessionId === h.fake.logins[1]!.sessionId, 5_000);
  });

  it("hands a message sent at any step of the handover once: before its IDENTIFY, before the RESUME, during the replay", async () => {
    const h = await harness({ start: false });
    await deadHolder(h.fake, rowsOf(h));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("before the start"));
    // A message at every step of every connection of the new holder: its own, then the replay's.
    const steps: string[] = [];
    h.fake.onStep((step) => {
      steps.push(step);
      h.fake.dispatch("MESSAGE_CREATE", h.fake.dm(`at ${step} ${steps.length}`));
    });
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    expect(steps).toEqual(["connect", "identify", "connect", "resume"]);
    // The replay, then the held live events: what both sessions got comes twice, and the inbox keeps the first.
    await until(() => h.received.some((r) => r.message.text === "live"), 10_000);
    const seen = new Set<string | undefined>();
    const kept = h.received.filter(
      (r) => !seen.has(inboundDedupeKey(r.message)) && seen.add(inboundDedupeKey(r.message)),
    );
    expect(kept.map((r) => r.message.text)).toEqual([
      "before the start",
      ...steps.map((step, i) => `at ${step} ${i + 1}`),
      "live",
    ]);
    expect(h.fake.logins.map((l) => l.kind)).toEqual(["identify", "identify", "resume"]);
    expect(h.fake.secondConnections()).toBe(0);
  });

  it.each([
    ["a Reconnect (op 7) halfway through the replay", "reconnect", 2],
    ["a resumable Invalid Session (op 9 true)", "resumable", 1],
  ] as const)("RESUMEs again after %s, and hands every message once", async (_, how, resumes) => {
    const h = await harness({ start: false });
    await deadHolder(h.fake, rowsOf(h));
    const gap = ["gap 1", "gap 2", "gap 3", "gap 4"];
    for (const text of gap) h.fake.dispatch("MESSAGE_CREATE", h.fake.dm(text));
    h.fake.interruptNextResume(how);
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    expect((await h.waitForReceived(5)).map((r) => r.message.text)).toEqual([...gap, "live"]);
    const kinds = h.fake.logins.map((l) => l.kind);
    expect(kinds).toEqual(["identify", "identify", ...Array<string>(resumes).fill("resume")]);
    // A Reconnect resumes after the last event it got: nothing is replayed twice.
    expect(h.fake.logins.slice(2).reduce((sum, l) => sum + l.replayed, 0)).toBe(4);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        message: "discord session replay: resuming again",
        fields: expect.objectContaining({ end: how }),
      }),
    );
  });

  it("goes on with its own session when Discord no longer knows the stored session, and says so in the log", async () => {
    const h = await startWithRow((fake) => ({
      sessionId: "ended-long-ago",
      resumeUrl: fake.apiRoot.replace(/^http/, "ws").replace(/\/api$/, ""),
      seq: 40,
    }));
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        message: "discord session replayed",
        fields: expect.objectContaining({ end: "invalid" }),
      }),
    );
    expect(warnings(h)).toEqual([expect.stringContaining("discord session not resumable")]);
  });

  it("identifies without a replay when the dead holder's session expired at Discord, with one warning that the gap could not be replayed", async () => {
    const clock = createManualClock();
    const h = await harness({ start: false, fake: { sessions: { ttlMs: 60_000, now: clock.now } } });
    await deadHolder(h.fake, rowsOf(h));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("sent in the gap"));
    clock.advance(60_001);
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    expect((await h.waitForReceived(1)).map((r) => r.message.text)).toEqual(["live"]);
    // Its own IDENTIFY only: the RESUME was refused (op 9 d: false), nothing replayed.
    expect(h.fake.logins.map((l) => l.kind)).toEqual(["identify", "identify"]);
    expect(warnings(h)).toEqual([
      expect.stringMatching(/discord session not resumable .*expired.* could not be replayed/),
    ]);
  });

  it.each([
    ["refused (HTTP 503)", "refuse"],
    ["reset before HELLO", "reset"],
  ] as const)("tries a replay connection %s once again after a short wait, and replays", async (_, how) => {
    const h = await harness({ start: false });
    await deadHolder(h.fake, rowsOf(h));
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("sent in the gap"));
    // The account's own connection is accepted; the replay connection right after its READY fails once.
    h.fake.onStep((step) => step === "identify" && h.fake.failNextConnections(1, how));
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    expect((await h.waitForReceived(2)).map((r) => r.message.text)).toEqual(["sent in the gap", "live"]);
    expect(h.fake.logins.map((l) => [l.kind, l.replayed])).toEqual([
      ["identify", 0],
      ["identify", 0],
      ["resume", 1],
    ]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        message: "discord session replay: resuming again",
        fields: expect.objectContaining({ end: "dropped", waitMs: 250 }),
      }),
    );
    expect(warnings(h)).toEqual([]);
  });

  it.each([
    ["a URL that is no URL", { sessionId: "s", resumeUrl: "wss://a b", seq: 1 }],
    ["the token in clear text to another host", { sessionId: "s", resumeUrl: "ws://evil.example:8080", seq: 1 }],
    ["not a gateway URL", { sessionId: "s", resumeUrl: "https://evil.example", seq: 1 }],
    ["not a session", "garbage"],
  ])(
    "ignores a stored row with %s, with a warning naming the row: the account identifies and starts",
    async (_, row) => {
      const h = await startWithRow(() => row);
      expect(h.logger.records).toContainEqual(
        expect.objectContaining({
          level: "warn",
          message: expect.stringContaining("discord gateway session row unreadable"),
          fields: expect.objectContaining({ row: "discord/default/gatewaySession" }),
        }),
      );
      // Overwritten by the new session.
      await until(
        () => (rowsOf(h).get(KEY) as StoredSession | undefined)?.sessionId === h.fake.logins[0]!.sessionId,
        5_000,
      );
    },
  );

  it("holds live messages no longer than the replay's 10 s bound (plus 1 s for its close) when the stored session's server never answers", async () => {
    const silent = await silentGateway("resume");
    onTestFinished(silent.close);
    const clock = createManualClock();
    const h = await harness({ start: false, replayClock: clock });
    await rowsOf(h).write({ [KEY]: { sessionId: "s", resumeUrl: silent.resumeUrl, seq: 3 } });
    // Sent as soon as the account's own session is READY: it waits behind the replay.
    h.fake.onStep((step) => step === "identify" && h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live")));
    const started = h.start();
    await until(silent.waiting, 5_000);
    expect(h.received).toEqual([]);
    // The bound and the close wait, on the replay's clock: the live message is handed then, and not later.
    clock.advance(10_000 + 1_000);
    expect((await h.waitForReceived(1, 5_000)).map((r) => r.message.text)).toEqual(["live"]);
    await started;
    expect(warnings(h)).toEqual([expect.stringContaining("discord session not fully replayed")]);
  });

  it("keeps its session at a clean stop, stored past the last message, and closed so Discord keeps it: the next start replays what was sent in between", async () => {
    const h = await harness();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("before the stop"));
    await h.waitForReceived(1);
    await h.adapter.stop();
    // READY 1, GUILD_CREATE 2, the message 3: written before the stop settled.
    const own = h.fake.logins[0]!.sessionId;
    expect(rowsOf(h).get(KEY)).toEqual({ sessionId: own, resumeUrl: expect.stringMatching(/^ws:/), seq: 3 });
    expect(h.fake.connections()).toBe(0);
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("while stopped"));
    await h.start();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("live"));
    expect((await h.waitForReceived(3)).map((r) => r.message.text)).toEqual([
      "before the stop",
      "while stopped",
      "live",
    ]);
    expect(h.fake.logins.map((l) => [l.kind, l.replayed])).toEqual([
      ["identify", 0],
      ["identify", 0],
      ["resume", 1],
    ]);
    expect(warnings(h)).toEqual([]);
  });

  it("stores the sequence only of messages stored: a message the core could not store is replayed to the next holder", async () => {
    const h = await harness({
      // Its tries close together; the freeze's bound (1,000 messages, 10 minutes) as configured.
      sessionLimits: { ...SESSION_LIMITS, retriesMs: [1, 1] },
      beforeReceive: async (message) => {
        if (message.text === "not stored") throw new Error("disk full");
      },
    });
    for (const text of ["stored", "not stored", "stored after it"]) h.fake.dispatch("MESSAGE_CREATE", h.fake.dm(text));
    await h.waitForReceived(2);
    await h.adapter.stop();
    // It stays at "stored" (3): the next holder's RESUME gives "not stored" back (and the one after, a duplicate).
    const row = rowsOf(h).get(KEY) as StoredSession;
    expect(row.seq).toBe(3);
    const again = await replayStoredSession(row, DISCORD_BOT.token, { logger: createMemoryLogger(), accountId: "x" });
    expect(again.messages.map((m) => (m as { content: string }).content)).toEqual(["not stored", "stored after it"]);
  });
});
