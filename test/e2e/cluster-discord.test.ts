// Two gateway processes on one PostgreSQL schema (docs/scale-out.md "Channel accounts", issue #28)
// with the real Discord adapter on one fake Discord: the owner holds the bot's gateway connection
// (lease `account:discord:default`), the standby connects none. SIGKILLed, the owner's account goes
// to the standby, which connects within leaseTtlMs + 5 s; the fake never sees two gateways
// connected as the bot (two IDENTIFYed connections at once). The new holder IDENTIFYs, then RESUMEs
// the dead holder's gateway session (stored in the channel state) on its replay connection, so
// Discord replays what the dead holder had not stored and what was sent while no gateway was
// connected: every message is answered, once. The same after a clean stop (SIGTERM, a rolling
// restart): the holder closes its session so that Discord keeps it, and the standby resumes it.
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_BOT, type FakeDiscord, WORLD, dmChannelOf, startFakeDiscord } from "../fakes/fake-discord-server.js";
import { type Cluster, useCluster } from "../support/cluster-harness.js";
import { type ChatTraffic, chatsAnswered, chatsOutcome } from "../support/cluster-traffic.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";
import type { SentLog } from "../support/telegram-burst.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeDiscord[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Failure detection a loaded 2-core machine does not trip by itself (a SIGKILL is seen at once anyway). */
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 1_000 };
const MENTION = `<@${DISCORD_BOT.user.id}>`;
const BOT_MENTIONED = { mentions: [{ ...DISCORD_BOT.user, discriminator: "0", avatar: null, bot: true }] };
/** Three chats, three sessions: Ada's DMs, #general and its thread (the bot mentioned in the guild). */
const PLACES = [dmChannelOf(WORLD.ada.id), WORLD.general, WORLD.thread];

/** Two gateways with the fake's bot; every message its own turn. */
function startTwo(fake: FakeDiscord): Promise<Cluster> {
  return startCluster({
    size: 2,
    cluster: CLUSTER,
    env: { SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot },
    config: { session: { queue: { cap: 1000, debounceMs: 0 } } },
  });
}

/** Dispatches `perPlace` messages into each place, round by round, labelled `label`. */
function pushPlaces(fake: FakeDiscord, perPlace: number, label: string, traffic: ChatTraffic = new Map()) {
  for (let round = 1; round <= perPlace; round++)
    for (const [i, place] of PLACES.entries()) {
      const text = `${label} place ${i + 1} message ${round}`;
      traffic.set(place, [...(traffic.get(place) ?? []), text]);
      fake.dispatch(
        "MESSAGE_CREATE",
        i === 0 ? fake.dm(text) : fake.message({ channel_id: place, content: `${MENTION} ${text}`, ...BOT_MENTIONED }),
      );
    }
  return traffic;
}

/** The fake's sends as the traffic helpers read them. */
const sentLog = (fake: FakeDiscord): SentLog => ({
  sent: fake.sent.map((s) => ({ text: s.content, chatId: s.channelId })),
});

/** SIGKILLs the owner; returns the new owner and how long after the kill the bot was connected again. */
async function killOwner(cluster: Cluster, fake: FakeDiscord) {
  const first = await cluster.owner();
  const killedAt = Date.now();
  await cluster.kill(first);
  const next = await cluster.owner({ not: first });
  await until(() => fake.logins.some((l) => l.at > killedAt), 60_000);
  const login = fake.logins.find((l) => l.at > killedAt)!;
  return { next, killedAt, connectedMs: login.at - killedAt, login };
}

describe("a Discord bot held by one gateway of a cluster", () => {
  it("is taken over within leaseTtlMs + 5 s of a SIGKILL of its holder mid-burst, never two gateways connected as the bot; every message answered once", async () => {
    // Each reply is shown at once and answered 40 ms later: a kill can fall in that window.
    const fake = await startFakeDiscord({ sendDelayMs: 40 });
    fakes.push(fake);
    const cluster = await startTwo(fake);
    expect(await cluster.leaseHolder("account:discord:default")).toBe("gw-1");
    const traffic = pushPlaces(fake, 15, "burst");
    await until(() => fake.sent.length >= 12, 60_000);
    const { next, connectedMs, login } = await killOwner(cluster, fake);
    expect(connectedMs).toBeLessThan(CLUSTER.leaseTtlMs + 5_000);
    expect(await cluster.leaseHolder("account:discord:default")).toBe(next.name);
    await until(() => chatsAnswered(sentLog(fake), traffic), 60_000);
    await next.idle();
    // Discord drops a resent chunk by its nonce, so a chunk in flight at the kill reaches the chat once.
    expect(chatsOutcome(sentLog(fake), traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
    expect(fake.secondConnections()).toBe(0);
    process.stderr.write(
      `cluster discord SIGKILL: connected again by ${next.name} ${connectedMs} ms after the kill (${login.kind}, ${login.replayed} events replayed); ${fake.nonceRepeats()} resent chunk(s) dropped by nonce\n`,
    );
  }, 60_000);

  it("answers messages sent while no gateway was connected: the new holder RESUMEs the dead holder's session and Discord replays them", async () => {
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const cluster = await startTwo(fake);
    const traffic = pushPlaces(fake, 2, "before");
    await until(() => chatsAnswered(sentLog(fake), traffic), 60_000);
    const first = await cluster.owner();
    const killedAt = Date.now();
    await cluster.kill(first);
    // The holder is dead and the standby not yet connected: Discord keeps these for the dead session only.
    pushPlaces(fake, 3, "gap", traffic);
    expect(fake.logins.filter((l) => l.at >= killedAt)).toEqual([]);
    const next = await cluster.owner({ not: first });
    await until(() => chatsAnswered(sentLog(fake), traffic), 60_000);
    await next.idle();
    expect(chatsOutcome(sentLog(fake), traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
    const after = fake.logins.filter((l) => l.at >= killedAt);
    // A session of the new holder's own, then a resume of the dead session (its 9 gap messages replayed).
    expect(after.map((l) => l.kind)).toEqual(["identify", "resume"]);
    expect(after[1]!.replayed).toBeGreaterThanOrEqual(9);
    expect(fake.secondConnections()).toBe(0);
    process.stderr.write(
      `cluster discord gap: own session ${after[0]!.at - killedAt} ms, resumed ${after[1]!.at - killedAt} ms after the kill; ${after[1]!.replayed} events replayed\n`,
    );
  }, 60_000);

  it("answers once each message sent between a SIGTERM of its holder mid-burst and the standby's connection: the stop leaves the session resumable", async () => {
    const fake = await startFakeDiscord({ sendDelayMs: 40 });
    fakes.push(fake);
    const cluster = await startTwo(fake);
    const first = await cluster.owner();
    const standby = cluster.gateways.find((g) => g !== first)!;
    const traffic = pushPlaces(fake, 10, "burst");
    await until(() => fake.sent.length >= 8, 60_000);
    // The standby paused, so the gap between the holder's exit and its connection is sure to be there.
    cluster.pause(standby);
    first.process.kill("SIGTERM");
    expect(await first.exited).toEqual({ code: 0, signal: null });
    const stoppedAt = Date.now();
    expect(fake.connections()).toBe(0);
    pushPlaces(fake, 3, "gap", traffic);
    cluster.resume(standby);
    const next = await cluster.owner({ not: first });
    await until(() => chatsAnswered(sentLog(fake), traffic), 60_000);
    await next.idle();
    expect(chatsOutcome(sentLog(fake), traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
    const after = fake.logins.filter((l) => l.at >= stoppedAt);
    // Its own session, then the stopped holder's resumed: the 9 gap messages, and the burst's last ones
    // if its draining core refused them (a loaded machine): the row stays before the first of those.
    expect(after.map((l) => l.kind)).toEqual(["identify", "resume"]);
    expect(after[1]!.replayed).toBeGreaterThanOrEqual(9);
    expect(fake.secondConnections()).toBe(0);
    process.stderr.write(
      `cluster discord SIGTERM: own session ${after[0]!.at - stoppedAt} ms, resumed ${after[1]!.at - stoppedAt} ms after the exit (standby resumed from its pause at once); ${after[1]!.replayed} events replayed\n`,
    );
  }, 120_000);
});
