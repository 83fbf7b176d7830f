// The inbox on a port whose partitions change while it runs (docs/scale-out.md "Partitions adopted
// and evicted one by one"): an adopted partition's rows, written by the gateway that held it, are
// sorted into pending, set-aside and handled as an open sorts them; an evicted one's are forgotten;
// `pipeline.resume(only)` replays just the adopted sessions' entries. The memory port's `parts`
// stands in for the PostgreSQL port opened for some partitions.
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { StoredTurn } from "../../src/agents/stored-turn.js";
import type { ForwardedEntry } from "../../src/inbound/inbox-forward.js";
import { type InboxDeps, createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { StatePort } from "../../src/state/state-port.js";
import { type ManualClock, createManualClock } from "../fakes/manual-clock.js";
import { setupPipeline } from "../support/inbound-pipeline.js";
import { telegramDm } from "../support/telegram-dm.js";

const COUNT = 16;
const of = (sessionKey: string) => partOf(sessionKey, COUNT);
/** The first session key `agent:main:telegram:dm:<n>` of a partition other than those in `not`. */
const sessionNotIn = (...not: number[]) => {
  for (let n = 0; ; n++) if (!not.includes(of(`agent:main:telegram:dm:${n}`))) return `agent:main:telegram:dm:${n}`;
};
/** A session of ours (partition A) and one of the peer's (partition B). */
const SA = sessionNotIn();
const A = of(SA);
const SB = sessionNotIn(A);
const B = of(SB);

const msg = (id: string) => telegramDm(`message ${id}`, { messageId: id });
const TURN: StoredTurn = {
  source: "hook",
  sessionKey: SB,
  text: "[ci] deploy 7 finished",
  owner: false,
  provenance: { kind: "system", channel: "hook", label: "ci" },
  input: { isolated: false, announceTo: "telegram:111" },
};

/** A port on `data` holding `held`, as a gateway of `cluster.owners: "many"` opens it. */
const portOf = (data: MemoryStateData, held: number[]) => openMemoryState({ data, parts: { of, held } });

/** An inbox on `state` at `inbox.json`, on the test's clock. */
const inboxOn = (state: StatePort, clock: ManualClock, more: Partial<InboxDeps> = {}) =>
  createInbox({ state, path: "inbox.json", logger: createMemoryLogger(), now: clock.now, ...more });

/**
 * What the gateway holding partition B wrote before it died: b1 pending (run-b1), b2 set aside, a
 * stored turn handled (run-b3), b4 handled.
 */
async function peerWrote(data: MemoryStateData, clock: ManualClock) {
  const peer = await inboxOn(portOf(data, [B]), clock);
  await peer.claim("k:b1", msg("b1"), { session: SB, runId: "run-b1" });
  await peer.claim("k:b2", msg("b2"), { session: SB });
  await peer.setAside("k:b2", { reason: "it kept crashing" });
  await peer.claimTurn("hook:b3", TURN, { runId: "run-b3" });
  await peer.complete("hook:b3");
  await peer.claim("k:b4", msg("b4"), { session: SB });
  await peer.complete("k:b4");
}

/** Our gateway: partition A, one pending entry of its own (k:a1), and the peer's rows of B in storage. */
async function ourGateway(more: (port: StatePort) => Partial<InboxDeps> = () => ({})) {
  const data: MemoryStateData = new Map();
  const clock = createManualClock();
  const port = portOf(data, [A]);
  const inbox = await inboxOn(port, clock, more(port));
  await inbox.claim("k:a1", msg("a1"), { session: SA, runId: "run-a1" });
  await peerWrote(data, clock);
  return { data, clock, port, inbox };
}

const ids = (entries: Array<{ id: string }>) => entries.map((e) => e.id).sort();

describe("the inbox adopts and evicts partitions", () => {
  it("indexes the pending, set-aside and handled rows another gateway wrote for an adopted partition", async () => {
    const { port, inbox } = await ourGateway();
    expect(ids(inbox.pending())).toEqual(["k:a1"]);
    expect(inbox.knows("k:b4")).toBe(false);

    await port.parted!.adopt([B]);
    expect(ids(inbox.pending())).toEqual(["k:a1", "k:b1"]);
    expect(ids(inbox.listSetAside())).toEqual(["k:b2"]);
    expect(inbox.pendingRun("run-b1")).toBeDefined();
    expect(inbox.handledRun("run-b3")).toBe(true);
    // Redeliveries of the adopted session are duplicates, answered as the first copy was.
    expect(await inbox.claim("k:b4", msg("b4"), { session: SB })).toEqual({ status: "done" });
    expect(await inbox.claimTurn("hook:b3", TURN)).toEqual({ status: "done", runId: "run-b3", sessionKey: SB });
    expect(await inbox.claim("k:b1", msg("b1"), { session: SB })).toMatchObject({ status: "pending" });
    expect(await inbox.claim("k:b2", msg("b2"), { session: SB })).toEqual({ status: "done" });
    // A new entry is replayed after every adopted one.
    const fresh = await inbox.claim("k:b5", msg("b5"), { session: SB });
    const adopted = [...inbox.pending(), ...inbox.listSetAside()].filter((e) => e.id !== "k:b5");
    expect(fresh.status === "new" && fresh.entry.seq).toBeGreaterThan(Math.max(...adopted.map((e) => e.seq)));
  });

  it("keeps handled keys oldest first across an adopt: past maxKeys the oldest go, adopted or not", async () => {
    const data: MemoryStateData = new Map();
    const clock = createManualClock();
    const port = portOf(data, [A]);
    const inbox = await inboxOn(port, clock, { maxKeys: 3 });
    const peer = await inboxOn(portOf(data, [B]), clock);
    const handledAt = async (on: typeof inbox, key: string, session: string) => {
      clock.advance(1_000);
      await on.claim(key, msg(key), { session });
      await on.complete(key);
    };
    await handledAt(peer, "k:y", SB);
    await handledAt(inbox, "k:x", SA);
    await handledAt(inbox, "k:z", SA);
    await port.parted!.adopt([B]);
    expect(["k:y", "k:x", "k:z"].map((key) => inbox.knows(key))).toEqual([true, true, true]);

    // A fourth handled key: the oldest (the adopted k:y) is pruned, from storage too.
    await handledAt(inbox, "k:w", SA);
    expect(["k:y", "k:x", "k:z", "k:w"].map((key) => inbox.knows(key))).toEqual([false, true, true, true]);
    expect(data.get("inbox.json")?.has("k:y")).toBe(false);
  });

  it("forgets an evicted partition's entries and handled keys; the port refuses their writes; its own stay", async () => {
    const { port, inbox } = await ourGateway();
    await port.parted!.adopt([B]);
    await port.parted!.evict([B]);

    expect(ids(inbox.pending())).toEqual(["k:a1"]);
    expect(inbox.listSetAside()).toEqual([]);
    expect(["k:b1", "k:b2", "k:b4", "hook:b3"].map((key) => inbox.knows(key))).toEqual([false, false, false, false]);
    expect(inbox.pendingRun("run-b1")).toBeUndefined();
    expect(inbox.handledRun("run-b3")).toBe(false);
    await expect(inbox.claim("k:b6", msg("b6"), { session: SB })).rejects.toThrow(`belongs to partition ${B}`);
    expect(ids(inbox.pending())).toEqual(["k:a1"]);
    expect(await inbox.claim("k:a2", msg("a2"), { session: SA })).toMatchObject({ status: "new" });
  });

  it("forwards a redelivery of an evicted session to the partition's holder instead of answering it as handled", async () => {
    const forwarded: ForwardedEntry[] = [];
    const forwarding = (port: StatePort): Partial<InboxDeps> => ({
      holds: (sessionKey) => port.parted!.held().has(of(sessionKey)),
      forward: async (entry) => {
        forwarded.push(entry);
        return { status: "forwarded", runId: entry.runId, sessionKey: SB, repeat: false };
      },
    });
    const gateway = await ourGateway(forwarding);
    await gateway.port.parted!.adopt([B]);
    expect(await gateway.inbox.claim("k:b4", msg("b4"), { session: SB })).toEqual({ status: "done" });
    await gateway.port.parted!.evict([B]);
    expect(await gateway.inbox.claim("k:b4", msg("b4"), { session: SB })).toMatchObject({ status: "forwarded" });
    expect(forwarded.map((e) => e.dedupeKey)).toEqual(["k:b4"]);
  });
});

describe("pipeline.resume(only)", () => {
  it("replays only the adopted sessions' pending entries, a group tied to one turn as that turn; others stay pending", async () => {
    const data: MemoryStateData = new Map();
    const port = portOf(data, [A]);
    const gateway = await setupPipeline([{ text: "answer" }], { inboxState: port });
    await gateway.inbox.claim("telegram:default:42:a1", msg("a1"), { session: SA, runId: "run-a1" });
    // The peer stored two messages of B's session and tied them to one collected turn, then died.
    const peer = await createInbox({
      state: portOf(data, [B]),
      path: path.join(gateway.dir, "state", "inbox.json"),
      logger: createMemoryLogger(),
    });
    await peer.claim("telegram:default:42:b1", msg("b1"), { session: SB, runId: "run-b1" });
    await peer.claim("telegram:default:42:b2", msg("b2"), { session: SB, runId: "run-b2" });
    await peer.bind(["telegram:default:42:b1", "telegram:default:42:b2"], "turn-b");

    await port.parted!.adopt([B]);
    expect(await gateway.pipeline.resume((sessionKey) => of(sessionKey) === B)).toBe(1);
    await expect
      .poll(() => gateway.delivered.map((d) => [d.text, d.idempotencyKey]))
      .toEqual([["answer", "turn-b:reply"]]);
    await expect.poll(() => ids(gateway.inbox.pending())).toEqual(["telegram:default:42:a1"]);
    expect(gateway.model.calls).toHaveLength(1);
    expect(gateway.inbox.pending()[0]).toMatchObject({ runId: "run-a1", starts: 1 });
  });
});
