// DM pairing across N owners (docs/scale-out.md "DM pairing in many mode"): two real gateway
// processes in `cluster.owners: "many"`, the real Telegram adapter on the fake Bot API, real
// PostgreSQL. The global holder polls the bot and decides a DM's access before it forwards it; the
// DM's session lives on the other gateway, which sends the pairing notices and runs the turns.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { partOf } from "../../src/routing/partition.js";
import { adaDm } from "../fakes/fake-telegram-server.js";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import type { Cluster, ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { settledSplit } from "../support/cluster-many.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { until } from "../support/gateway-child.js";

const clients = useClusterClients();
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
/** Owners of the Telegram account: one of them lands on a partition the non-global gateway holds. */
const OWNERS = Array.from({ length: 100 }, (_, i) => String(7000 + i));
const PLAY: PlaybookRule[] = [{ when: "after approval", first: { text: "welcome aboard" } }];

/** Two "many" gateways, DMs under dmPolicy "pairing" (owners 7000-7099), a session per chat; the split settled. */
async function twoOwners() {
  const fake = await clients.fakeTelegram();
  const logs = await mkdtemp(path.join(tmpdir(), "sb-pairing-"));
  const envOf = Object.fromEntries([1, 2].map((i) => [`gw-${i}`, { SB_PLAY_LOG: path.join(logs, `gw-${i}.log`) }]));
  const cluster = await clients.startCluster({
    size: 2,
    cluster: CLUSTER,
    env: {
      SB_API_ROOT: fake.apiRoot,
      // settledSplit reads the "holding partitions" lines
      SB_LOG_LEVEL: "info",
      SB_PLAY: JSON.stringify(PLAY),
      SB_TELEGRAM: JSON.stringify({ dmPolicy: "pairing", allowFrom: [], owners: OWNERS }),
    },
    envOf,
    config: { session: { dmScope: "per-channel-peer" } },
  });
  const split = await settledSplit(cluster);
  const global = await cluster.owner();
  const other = cluster.gateways.find((g) => g !== global)!;
  /** The prompts the playbook model of `gateway` was asked: the turns it ran. */
  const played = async (gateway: ClusterGateway): Promise<string[]> =>
    (await readFile(path.join(logs, `${gateway.name}.log`), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string);
  /** Telegram chats (private, id = the sender's) from `first` on whose DM session `holder` holds. */
  const chatsOn = (holder: ClusterGateway, count: number, first = 5000) =>
    Array.from({ length: 100 }, (_, i) => first + i)
      .filter((chat) => split.get(holder.name)!.includes(partOf(`agent:main:telegram:dm:${chat}`)))
      .slice(0, count);
  return { fake, cluster, split, global, other, played, chatsOn };
}

/** Waits until the inbox of the cluster marked message `id` of `chat` handled (its row `done`). */
async function handled(cluster: Cluster, chat: number, id: number): Promise<void> {
  const key = `telegram:default:${chat}:${id}`;
  await until(
    async () => (await cluster.rows("inbox")).some((r) => r.key === key && r.value.status === "done"),
    30_000,
  );
}

describe('cluster.owners "many": DM pairing', () => {
  it("a stranger whose DM session another gateway owns gets one code; approved through the CLI, their next DM runs a turn on that owner and is answered; a denied sender's DM runs none; /pair from an owner's chat there approves", async () => {
    const { fake, cluster, split, global, other, played, chatsOn } = await twoOwners();
    const [approved, denied] = chatsOn(other, 2) as [number, number];
    const sentTo = (chat: number) => fake.sent.filter((s) => s.chatId === String(chat)).map((s) => s.text);
    const codeOf = (chat: number) => /Pairing code: (\S+)/.exec(sentTo(chat).join("\n"))?.[1];

    // Two messages from a stranger: one code, sent once; neither runs a turn.
    const pushedAt = Date.now();
    fake.push(adaDm("hi", 1, approved));
    fake.push(adaDm("hello?", 2, approved));
    await until(() => codeOf(approved) !== undefined, 30_000);
    const codeMs = Date.now() - pushedAt;
    await handled(cluster, approved, 2);
    const code = codeOf(approved)!;
    await until(
      async () =>
        (await cluster.rows("outbox")).some((r) => r.key === `pairing:${code}:code` && r.value.status === "delivered"),
      30_000,
    );
    expect(sentTo(approved)).toEqual([expect.stringContaining(`Pairing code: ${code}`)]);
    // Filed (and sent) by the session's owner: the code's outbox row is in a partition the other gateway holds.
    const [notice] = await cluster.query<{ part: number }>(
      "SELECT part FROM state_rows WHERE tbl = 'outbox' AND key = $1",
      [`pairing:${code}:code`],
    );
    expect(split.get(other.name)).toContain(notice!.part);

    // Approved with `switchboard pairing approve` through the gateway that is not the global holder (relayed to it).
    const home = await tempHome();
    const approval = await cli(["pairing", "approve", code.toLowerCase(), "--url", `ws://127.0.0.1:${other.port}`], {
      home,
    });
    expect(approval).toMatchObject({ code: 0, stdout: `${STRINGS.pairDone("approved", code, `Ada (${approved})`)}\n` });
    await until(() => sentTo(approved).includes(STRINGS.pairingApproved), 30_000);
    const afterAt = Date.now();
    fake.push(adaDm("after approval", 3, approved));
    await until(() => sentTo(approved).includes("welcome aboard"), 30_000);
    const answerMs = Date.now() - afterAt;
    expect(sentTo(approved)).toEqual([expect.stringContaining(code), STRINGS.pairingApproved, "welcome aboard"]);
    // The turn ran on the session's owner, the DM having been polled and decided by the global holder.
    expect(await played(other)).toEqual(["after approval"]);
    expect(await played(global)).toEqual([]);

    // Another stranger, denied through a client's pairing.deny: their next DM is handled and runs no turn.
    fake.push(adaDm("let me in", 1, denied));
    await until(() => codeOf(denied) !== undefined, 30_000);
    const client = await clients.client(other.port);
    expect(await client.call("pairing.deny", { code: codeOf(denied) })).toMatchObject({ ok: true });
    fake.push(adaDm("are you there", 2, denied));
    await handled(cluster, denied, 2);
    await fake.flush();
    expect(sentTo(denied)).toEqual([expect.stringContaining(codeOf(denied)!)]);
    const denials = await cluster.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transcript_events WHERE strpos(message::text, 'let me in') > 0 OR strpos(message::text, 'are you there') > 0",
    );
    expect(denials[0]!.n).toBe(0);
    expect([...(await played(other)), ...(await played(global))]).toEqual(["after approval"]);

    // `/pair approve` typed in an owner's DM whose session the other gateway holds: run by the global holder, answered there.
    const [third] = chatsOn(other, 1, 6000) as [number];
    const [owner] = chatsOn(other, 1, 7000) as [number];
    fake.push(adaDm("me too", 1, third));
    await until(() => codeOf(third) !== undefined, 30_000);
    fake.push(adaDm(`/pair approve ${codeOf(third)}`, 1, owner));
    await until(() => sentTo(third).includes(STRINGS.pairingApproved), 30_000);
    await until(() => sentTo(owner).length > 0, 30_000);
    expect(sentTo(owner)).toEqual([STRINGS.pairDone("approved", codeOf(third)!, `Ada (${third})`)]);
    process.stderr.write(
      `many owners DM pairing: code sent ${codeMs} ms after the stranger's DM was pushed; the approved sender's next DM answered in ${answerMs} ms\n`,
    );
  }, 120_000);
});
