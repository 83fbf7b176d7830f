// Per-session writes across N owners (docs/scale-out.md "Per-session writes in many mode", issue
// #28 "One view"): three real gateway processes in `cluster.owners: "many"`. A client of a gateway
// that is not the global holder (relayed to it) patches, resets and deletes sessions the two other
// gateways own, and aborts a slow turn running on one of them: the global holder forwards each write
// by peer call to the session's owner, which runs it on its core, and the effect is the owner's.
import { PEER_KEY_HEADER, peerKey } from "../../src/cluster/peer-key.js";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import type { ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { sessionOn, settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";

const clients = useClusterClients();
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
const PLAY: PlaybookRule[] = [
  { when: "slow question", first: { delayMs: 30_000, text: "slow answer" } },
  ...["hello", "after the patch", "before the reset", "after the reset", "soon gone"].map((when) => ({
    when,
    first: { text: `answer to ${when}` },
  })),
];

const client = (port: number) => clients.servingClient(port);

type Session = { key: string; label?: string; sessionId: string };
type Message = { role: string; content: unknown };

describe('cluster.owners: "many": per-session writes', () => {
  it("a client of a relaying gateway patches, resets and deletes sessions the two other gateways own, and aborts a slow turn on one: each takes effect on the owner", async () => {
    const fake = await clients.fakeTelegram();
    const logs = await mkdtemp(path.join(tmpdir(), "sb-writes-"));
    const envOf = Object.fromEntries(
      [1, 2, 3].map((i) => [`gw-${i}`, { SB_PLAY_LOG: path.join(logs, `gw-${i}.log`) }]),
    );
    const cluster = await clients.startCluster({
      size: 3,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info", SB_PLAY: JSON.stringify(PLAY) },
      envOf,
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const [relaying, third] = cluster.gateways.filter((g) => g !== global) as [ClusterGateway, ClusterGateway];
    const played = async (gateway: ClusterGateway) =>
      (await readFile(path.join(logs, `${gateway.name}.log`), "utf8").catch(() => "")).split("\n").filter(Boolean);
    const on = await client(relaying.port);
    const turn = async (sessionKey: string, message: string, idempotencyKey: string) => {
      await on.call("chat.send", { sessionKey, message, idempotencyKey });
      return on.call<{ status: string }>("agent.wait", { runId: idempotencyKey, timeoutMs: 30_000 });
    };
    const listed = async (gateway: ClusterGateway) =>
      (await (await client(gateway.port)).call<{ sessions: Session[] }>("sessions.list", {})).sessions;
    const history = async (sessionKey: string) =>
      (await on.call<{ messages: Message[] }>("chat.history", { sessionKey })).messages.map((m) => JSON.stringify(m));
    const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
      const began = performance.now();
      const result = await fn();
      process.stderr.write(`many owners ${what} forwarded: ${(performance.now() - began).toFixed(0)} ms\n`);
      return result;
    };

    // A patch on the relaying gateway's session: the next turn there (its write of the entry from the owner's image) keeps it.
    const patched = sessionOn(split, relaying, "patch");
    expect(await turn(patched, "hello", "p-1")).toMatchObject({ status: "ok" });
    const patch = { key: patched, label: "patched across", sendPolicy: "allow" };
    expect(await timed("sessions.patch", () => on.call("sessions.patch", patch))).toMatchObject({
      ok: true,
      entry: { label: "patched across", sendPolicy: "allow" },
    });
    expect(await turn(patched, "after the patch", "p-2")).toMatchObject({ status: "ok" });
    for (const gateway of cluster.gateways)
      expect((await listed(gateway)).find((s) => s.key === patched)).toMatchObject({ label: "patched across" });

    // A reset on the third gateway's session: its transcript starts fresh there.
    const reset = sessionOn(split, third, "reset");
    expect(await turn(reset, "before the reset", "r-1")).toMatchObject({ status: "ok" });
    const was = (await listed(global)).find((s) => s.key === reset)!.sessionId;
    const answer = await timed("sessions.reset", () => on.call<{ entry: Session }>("sessions.reset", { key: reset }));
    expect(answer.entry.sessionId).not.toBe(was);
    expect(await turn(reset, "after the reset", "r-2")).toMatchObject({ status: "ok" });
    const fresh = await history(reset);
    expect(fresh.join("\n")).toContain("after the reset");
    expect(fresh.join("\n")).not.toContain("before the reset");

    // A delete on the relaying gateway's session: gone from sessions.list on every gateway.
    const deleted = sessionOn(split, relaying, "delete");
    expect(await turn(deleted, "soon gone", "d-1")).toMatchObject({ status: "ok" });
    expect(await timed("sessions.delete", () => on.call("sessions.delete", { key: deleted }))).toMatchObject({
      ok: true,
      deleted: true,
    });
    for (const gateway of cluster.gateways) expect((await listed(gateway)).map((s) => s.key)).not.toContain(deleted);

    // A session tool for the reset session, POSTed to the relaying gateway: run on the third gateway, answered 200.
    const invoked = await fetch(`http://127.0.0.1:${relaying.port}/tools/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "sessions_history", args: { sessionKey: reset }, sessionKey: reset }),
    });
    expect(invoked.status).toBe(200);
    expect(JSON.stringify(await invoked.json())).toContain("after the reset");

    // chat.abort of a slow turn running on the third gateway.
    const slow = sessionOn(split, third, "slow");
    await on.call("chat.send", { sessionKey: slow, message: "slow question", idempotencyKey: "slow-1" });
    await until(async () => (await played(third)).some((line) => line.includes("slow question")), 30_000);
    const aborted = await timed("chat.abort", () => on.call("chat.abort", { sessionKey: slow }));
    expect(aborted).toMatchObject({ ok: true, aborted: ["slow-1"] });
    expect(await on.call("agent.wait", { runId: "slow-1", timeoutMs: 20_000 })).toMatchObject({ status: "aborted" });
    expect((await history(slow)).join("\n")).not.toContain("slow answer");

    // The route on every gateway (a partition member's front, the global holder's server) answers from
    // that gateway itself: its own node id and no handler named so is 404 there (relayed, it would be 503).
    // A client's call sent through a plain relay (no peer front) carries the relay secret and no peer key:
    // refused (test/cluster/peer-call.test.ts "refuses the relay secret itself").
    const [row] = await cluster.query<{ value: string }>(
      "SELECT value FROM cluster_settings WHERE name = 'relay_secret'",
    );
    const secret = row!.value;
    for (const gateway of cluster.gateways) {
      const post = (to: string, headers: Record<string, string>) =>
        fetch(`http://127.0.0.1:${gateway.port}/cluster/call`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ to, name: "no.such.call", params: {} }),
        });
      const key = { [PEER_KEY_HEADER]: peerKey(secret) };
      expect((await post(gateway.name, {})).status).toBe(401);
      expect((await post(gateway.name, { [PEER_KEY_HEADER]: "wrong" })).status).toBe(401);
      // The relay secret alone is what a relay adds to a client's request: no peer's proof.
      expect((await post(gateway.name, { "x-switchboard-relay": secret })).status).toBe(401);
      expect((await post("gw-nobody", key)).status).toBe(503);
      expect((await post(gateway.name, key)).status).toBe(404);
    }
  }, 180_000);
});
