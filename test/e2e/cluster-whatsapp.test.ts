// Two gateway processes on one PostgreSQL schema (docs/scale-out.md "Channel accounts", issue #28)
// with the real WhatsApp adapter, each on a fake WhatsApp of its own (test/fakes/whatsapp-child.ts:
// the fake is a socket factory, so it lives in the gateway's process). The owner holds the linked
// device (lease `account:whatsapp:default`, one socket); the standby opens none. SIGKILLed, the
// owner's device goes to the standby, which connects it with the credentials the first holder
// stored in the channel state (not those linked in its own home) and answers.
import { describe, expect, it } from "vitest";
import { type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);

/** Failure detection a loaded 2-core machine does not trip by itself (a SIGKILL is seen at once anyway). */
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 1_000 };

/** The sockets a gateway's adapter created, by the name of the credentials each was built with. */
const sockets = (g: ClusterGateway) => g.lines().filter((l) => l.startsWith("wa-socket "));
/** The texts a gateway's fake WhatsApp accepted. */
const sent = (g: ClusterGateway) =>
  g
    .lines()
    .filter((l) => l.startsWith("wa-sent "))
    .map((l) => (JSON.parse(l.slice("wa-sent ".length)) as { text: string }).text);
/** A DM from Ada on the gateway's newest socket; resolves once it answered. */
async function dm(g: ClusterGateway, text: string) {
  g.process.stdin!.write(`wa-in ${text}\n`);
  await until(() => sent(g).includes(`Echo: ${text}`), 30_000);
}

describe("a WhatsApp linked device held by one gateway of a cluster", () => {
  it("is connected by the standby, with the credentials stored in the state, within leaseTtlMs + 5 s of a SIGKILL of its holder; never by two at once", async () => {
    const cluster = await startCluster({ size: 2, cluster: CLUSTER, env: { SB_CHANNEL: "whatsapp" } });
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    const linkedBy = `wa-socket linked by pid ${first.process.pid}`;
    await until(() => sockets(first).length > 0, 30_000);
    await dm(first, "hello before");
    expect(await cluster.leaseHolder("account:whatsapp:default")).toBe("gw-1");
    expect([sockets(first), sockets(second)]).toEqual([[linkedBy], []]);

    const killedAt = Date.now();
    await cluster.kill(first);
    await until(() => sockets(second).length > 0, 30_000);
    const connectedMs = Date.now() - killedAt;
    expect(connectedMs).toBeLessThan(CLUSTER.leaseTtlMs + 5_000);
    // The first holder's device, read from PostgreSQL: the folder linked in the standby's home was not imported.
    expect(sockets(second)).toEqual([linkedBy]);
    expect(await cluster.leaseHolder("account:whatsapp:default")).toBe("gw-2");
    await dm(second, "hello after");
    expect(sent(second)).toEqual(["Echo: hello after"]);
    process.stderr.write(`cluster whatsapp SIGKILL: the device connected by gw-2 ${connectedMs} ms after the kill\n`);
  }, 60_000);
});
