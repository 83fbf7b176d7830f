// `cluster.owners: "many"` with the real Discord adapter on the fake Discord (docs/discord.md
// "Send-only", docs/scale-out.md "Send-only channel adapters"): a gateway joining while Discord does
// not answer who the bot is (GET /users/@me answered 502, the call a send-only start makes) opens its
// partition core anyway instead of failing it and stopping (exit 1). Its sends fail, retryably, until
// Discord answers; then the reply waiting in its outbox goes out, once.
import { afterEach, describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { DISCORD_BOT, type FakeDiscord, WORLD, dmChannelOf, startFakeDiscord } from "../fakes/fake-discord-server.js";
import { useCluster } from "../support/cluster-harness.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeDiscord[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const MENTION = `<@${DISCORD_BOT.user.id}>`;
const BOT_MENTIONED = { mentions: [{ ...DISCORD_BOT.user, discriminator: "0", avatar: null, bot: true }] };
/** Three chats, three sessions: Ada's DMs, #general and its thread (the bot mentioned in the guild). */
const PLACES = [dmChannelOf(WORLD.ada.id), WORLD.general, WORLD.thread];

/** Ada's DM session key `agent:main:<mainKey>` in the upper half of the partitions: a joining second gateway takes those (the first gives up its highest). */
const MAIN_KEY = Array.from({ length: 100 }, (_, i) => `dm${i}`).find((key) => partOf(`agent:main:${key}`) >= 128)!;

/** The echoes the fake received in `place`. */
const echoesIn = (fake: FakeDiscord, place: string) =>
  fake.sent.filter((s) => s.channelId === place && s.content.startsWith("Echo: ")).map((s) => s.content);

describe("a partition core's send-only Discord start while Discord is away", () => {
  it("opens anyway on a gateway joining while GET /users/@me answers 502; its pending reply goes out once Discord answers", async () => {
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 1,
      cluster: { leaseTtlMs: 5_000, heartbeatMs: 1_000, owners: "many" },
      env: { SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
      config: { session: { mainKey: MAIN_KEY, queue: { cap: 1000, debounceMs: 0 } } },
    });
    fake.restDown(502, "/users/@me");
    const joined = await cluster.add();
    // Before: the joining gateway's core failed to open and the gateway exited 1, so no split settled.
    const exited = joined.exited.then(({ code }) => {
      throw new Error(`the joining gateway exited ${code}: ${joined.stderr().slice(-2000)}`);
    });
    const split = await Promise.race([settledSplit(cluster), exited]);
    expect(joined.stderr()).toContain("discord unreachable at a send-only start");
    const askedBefore = fake.outageAnswered();
    for (const [i, place] of PLACES.entries()) {
      const text = `away place ${i + 1}`;
      fake.dispatch(
        "MESSAGE_CREATE",
        i === 0 ? fake.dm(text) : fake.message({ channel_id: place, content: `${MENTION} ${text}`, ...BOT_MENTIONED }),
      );
    }
    // Which chats' sessions the joined gateway owns: those replies wait for Discord.
    const sessionKeys = async () => (await cluster.rows("sessions:main")).map((r) => r.key);
    await until(async () => (await sessionKeys()).length === 3, 60_000);
    const keys = await sessionKeys();
    const onJoined = keys.filter((key) => split.get(joined.name)?.includes(partOf(key)));
    expect(onJoined.length, `sessions ${keys.join(", ")} all on the first gateway`).toBeGreaterThan(0);
    // The joined gateway tried to send (asked Discord who the bot is again) and failed; the others' replies went out.
    await until(() => fake.outageAnswered() > askedBefore, 60_000);
    await until(() => fake.sent.length >= 3 - onJoined.length, 60_000);
    const answered = PLACES.filter((place) => echoesIn(fake, place).length > 0);
    expect(answered).toHaveLength(3 - onJoined.length);
    fake.restUp();
    await until(() => PLACES.every((place) => echoesIn(fake, place).length > 0), 60_000);
    expect(PLACES.map((place) => echoesIn(fake, place))).toEqual(PLACES.map((_, i) => [`Echo: away place ${i + 1}`]));
    expect((await settledSplit(cluster)).size).toBe(2);
  }, 120_000);
});
