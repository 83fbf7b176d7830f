// A paused partition owner of `cluster.owners: "many"` (docs/scale-out.md "N owners") commits
// nothing, sends nothing and answers nothing for its sessions after it continues: the gateway that
// owns a busy session (not the global holder) is SIGSTOPped while its model step runs; the other
// takes its partitions at the lease TTL and answers the message itself; continued, the paused one
// writes no row, sends nothing and exits, giving its leases up.
import { afterEach, describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { useCluster } from "../support/cluster-harness.js";
import { settledSplit } from "../support/cluster-many.js";
import { stateRows, transcriptRows } from "../support/cluster-rows.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const CLUSTER = { leaseTtlMs: 2_000, heartbeatMs: 500, owners: "many" as const };
const SLOW = [{ when: "slow question", first: { text: "slow answer", delayMs: 3_000 } }];

/** A Telegram DM chat whose session (`dmScope: per-channel-peer`) is in one of `parts`. */
function chatIn(parts: readonly number[]): number {
  for (let chat = 5001; ; chat++) if (parts.includes(partOf(`agent:main:telegram:dm:${chat}`))) return chat;
}

describe('a SIGSTOPped partition owner of cluster.owners: "many"', () => {
  it("with a turn in flight is replaced at its lease TTL by the other gateway, which answers; continued, it commits nothing, sends nothing and exits", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: CLUSTER,
      env: {
        SB_API_ROOT: fake.apiRoot,
        SB_PLAY: JSON.stringify(SLOW),
        SB_TELEGRAM: JSON.stringify({ dmPolicy: "open" }),
        SB_LOG_LEVEL: "info",
      },
      config: { session: { dmScope: "per-channel-peer" } },
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const paused = cluster.gateways.find((g) => g !== global)!;
    const chat = chatIn(split.get(paused.name)!);
    fake.push(adaDm("slow question", 1, chat));
    // The typing indicator starts with the turn on the session's owner, just before the model is asked.
    await fake.waitFor("sendChatAction");
    cluster.pause(paused);
    const pausedAt = Date.now();
    const answered = () => fake.sent.filter((s) => s.text === "slow answer");
    await until(() => answered().length > 0, 30_000);
    const answeredMs = Date.now() - pausedAt;
    await settledSplit(cluster, [global]);
    await global.idle();
    const before = { rows: await stateRows(cluster.query), transcript: await transcriptRows(cluster.query) };

    cluster.resume(paused);
    // Nothing to wait for but its exit: then everything it would still have done is done.
    expect(await paused.exited).toEqual({ code: 1, signal: null });
    await global.idle();
    expect(answered()).toEqual([expect.objectContaining({ chatId: String(chat), text: "slow answer" })]);
    expect(await stateRows(cluster.query)).toEqual(before.rows);
    expect(await transcriptRows(cluster.query)).toEqual(before.transcript);
    expect(before.transcript.filter((m) => m.includes("slow answer"))).toHaveLength(1);
    process.stderr.write(
      `many owners fencing: ${global.name} answered ${answeredMs} ms after the SIGSTOP of ${paused.name}\n`,
    );
  }, 90_000);
});
