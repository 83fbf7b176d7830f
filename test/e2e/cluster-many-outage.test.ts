// `cluster.owners: "many"` through a full Discord outage (docs/scale-out.md "N owners", docs/discord.md
// "Start during an outage"): the global holder is SIGKILLed while every REST call to the fake Discord
// is answered 502, so the other gateway becomes the global holder and opens its global core (beside
// its partition core) with Discord away: its login fails. Before, such a core failed to open and the
// gateway exited 1, and the next global holder hit the same (a cascade). Now the gateway keeps
// running, the account starts not connected and logs in once Discord answers, and a DM sent during the
// outage is answered once. The same with Telegram, whose Bot API answers 502 to every method: the new
// holder's readiness names the account not connected, and why.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeDiscord, dmChannelOf, startFakeDiscord, WORLD } from "../fakes/fake-discord-server.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: Array<FakeDiscord | FakeTelegramServer> = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** The echoes of `text` the fake received in Ada's DMs. */
const echoes = (fake: FakeDiscord, text: string) =>
  fake.sent.filter((s) => s.channelId === dmChannelOf(WORLD.ada.id) && s.content === `Echo: ${text}`);

/** Rejects, naming the gateway and its log, as soon as one of `gateways` exits. */
const anyExit = (gateways: ClusterGateway[]) =>
  Promise.race(
    gateways.map((g) =>
      g.exited.then(({ code, signal }) => {
        throw new Error(`${g.name} exited (${code ?? signal}): ${g.stderr().slice(-2000)}`);
      }),
    ),
  );

describe("many mode through a full Discord outage", () => {
  it("keeps the next global holder running when it opens its global core while Discord answers 502 to everything; a DM sent then is answered once it is back", async () => {
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: { leaseTtlMs: 5_000, heartbeatMs: 1_000, owners: "many" },
      env: { SB_CHANNEL: "discord", SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
      config: { session: { queue: { cap: 1000, debounceMs: 0 } } },
    });
    await settledSplit(cluster);
    fake.dispatch("MESSAGE_CREATE", fake.dm("before"));
    await until(() => echoes(fake, "before").length > 0, 60_000);
    const killed = await cluster.owner();
    const holder = cluster.gateways.find((g) => g !== killed)!;
    fake.restDown(502);
    await cluster.kill(killed);
    const exited = anyExit([holder]);
    // The survivor became the global holder: its global core opened with Discord away.
    await Promise.race([settledSplit(cluster, [holder]), exited]);
    await Promise.race([until(() => holder.stderr().includes("discord unreachable at start"), 60_000), exited]);
    fake.dispatch("MESSAGE_CREATE", fake.dm("during the outage"));
    fake.restUp();
    await Promise.race([until(() => echoes(fake, "during the outage").length > 0, 60_000), exited]);
    expect(holder.stderr()).toContain("discord reached: logged in after the outage at start");
    expect(fake.sent.map((s) => s.content)).toEqual(["Echo: before", "Echo: during the outage"]);
    expect(await cluster.leaseHolder("account:discord:default")).toBe(holder.name);
    expect(holder.process.exitCode).toBe(null);
  }, 150_000);

  it("keeps the next global holder running when it opens its global core while the Bot API answers 502 to everything; readiness says why; a DM sent then is answered once", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: { leaseTtlMs: 5_000, heartbeatMs: 1_000, owners: "many" },
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
      config: { session: { queue: { cap: 1000, debounceMs: 0 } } },
    });
    await settledSplit(cluster);
    const replies = (text: string) => fake.sent.filter((s) => s.text === `Echo: ${text}`);
    fake.push(adaDm("before", 1));
    await until(() => replies("before").length > 0, 60_000);
    const killed = await cluster.owner();
    const holder = cluster.gateways.find((g) => g !== killed)!;
    let back!: () => void;
    const over = new Promise<void>((resolve) => (back = resolve));
    for (const method of ["getMe", "setMyCommands", "deleteWebhook", "getUpdates", "sendMessage", "sendChatAction"])
      void fake.failFor(method, { error_code: 502, description: "Bad Gateway" }, over);
    const getMeBefore = fake.callsTo("getMe").length;
    await cluster.kill(killed);
    const exited = anyExit([holder]);
    await Promise.race([settledSplit(cluster, [holder]), exited]);
    // The new holder's global core asked getMe during the outage: its account is reported not connected.
    const channelPart = async () =>
      (
        (await rawRequest(holder.port, { path: "/readyz" })).body.parts as Array<{
          name: string;
          ok: boolean;
          reason: string;
        }>
      ).find((p) => p.name === "telegram/default");
    await Promise.race([until(async () => (await channelPart())?.ok === false, 60_000), exited]);
    expect((await channelPart())?.reason).toMatch(/^not connected: Telegram not reached yet.*502/);
    expect(fake.callsTo("getMe").length).toBeGreaterThan(getMeBefore);
    fake.push(adaDm("during the outage", 2));
    back();
    await Promise.race([until(() => replies("during the outage").length > 0, 60_000), exited]);
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: before", "Echo: during the outage"]);
    expect(await channelPart()).toMatchObject({ ok: true, reason: "connected" });
    expect(holder.process.exitCode).toBe(null);
  }, 150_000);
});
