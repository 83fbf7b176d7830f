// A paused owner sends nothing and commits nothing after it continues (docs/scale-out.md): the owner
// of a busy session is SIGSTOPped while its model step runs, a standby takes the schema over at the
// lease TTL and answers the message itself; continued (SIGCONT), the old owner's turn ends into a
// fence: it writes no row, sends no message, and exits, giving the lease up.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { useCluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** A short TTL, so the takeover of a paused owner comes soon. */
const CLUSTER = { leaseTtlMs: 2_000, heartbeatMs: 500 };
/** The model step is slow: the owner is paused inside it, and the new owner's run of it takes as long. */
const SLOW = [{ when: "slow question", first: { text: "slow answer", delayMs: 3_000 } }];

describe("a SIGSTOPped owner with a turn in flight", () => {
  it("is replaced at its lease TTL by a standby that answers; continued, it commits nothing, sends nothing and exits", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(SLOW) },
    });
    const paused = await cluster.owner();
    fake.push(adaDm("slow question", 1));
    // The typing indicator starts with the turn, just before the model is asked.
    await fake.waitFor("sendChatAction");
    cluster.pause(paused);
    const pausedAt = Date.now();
    const next = await cluster.owner({ not: paused });
    const tookOverMs = Date.now() - pausedAt;
    await until(() => fake.sent.some((s) => s.text === "slow answer"), 30_000);
    await next.idle();
    const fence = async () =>
      (
        await cluster.query<{ owner: string; fence: string }>(
          "SELECT owner, fence FROM cluster_leases WHERE name = 'schema:writer'",
        )
      )[0];
    const before = { rows: await stateRows(cluster.query), transcript: await transcriptRows(cluster.query) };
    const fenceBefore = await fence();

    cluster.resume(paused);
    // Nothing to wait for but its exit: then everything it would still have done is done.
    expect(await paused.exited).toEqual({ code: 1, signal: null });
    await next.idle();
    expect(fake.sent.filter((s) => s.text === "slow answer")).toEqual([
      expect.objectContaining({ chatId: "111", text: "slow answer" }),
    ]);
    expect(await stateRows(cluster.query)).toEqual(before.rows);
    expect(await transcriptRows(cluster.query)).toEqual(before.transcript);
    expect(before.transcript.filter((m) => m.includes("slow answer"))).toHaveLength(1);
    expect(await fence()).toEqual(fenceBefore);
    process.stderr.write(
      `cluster fencing: ${next.name} owned the schema ${tookOverMs} ms after the SIGSTOP (leaseTtlMs ${CLUSTER.leaseTtlMs}); ` +
        `getUpdates refused as concurrent: ${fake.conflicts()}\n`,
    );
  }, 90_000);
});

/** Every state row as stored now (table, key, value), in a stable order. */
async function stateRows(query: (sql: string) => Promise<Array<{ row: string }>>): Promise<string[]> {
  return (await query("SELECT tbl || '/' || key || '=' || value::text AS row FROM state_rows ORDER BY tbl, key")).map(
    (r) => r.row,
  );
}

/** Every transcript message as stored now, in a stable order. */
async function transcriptRows(query: (sql: string) => Promise<Array<{ row: string }>>): Promise<string[]> {
  return (
    await query("SELECT tid || '#' || seq || ' ' || message::text AS row FROM transcript_events ORDER BY tid, seq")
  ).map((r) => r.row);
}
