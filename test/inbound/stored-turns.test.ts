// Turns that hooks, gateway clients and tools start, kept in the inbox like messages
// (src/inbound/stored-turns.ts): stored before they run, deduped by their key for as long as the
// inbox keeps dedupe memory (a reopen included), done when their runner settles.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { StoredTurn, TurnRun } from "../../src/agents/stored-turn.js";
import { parseConfig } from "../../src/config/index.js";
import { createInboundPipeline } from "../../src/inbound/handle-inbound.js";
import { describeSetAside } from "../../src/inbound/inbox-rows.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { createStoredTurns } from "../../src/inbound/stored-turns.js";
import { createMemoryLogger } from "../../src/logger.js";
import { onMemoryState } from "../support/memory-state.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";

const TURN: StoredTurn = {
  source: "hook",
  sessionKey: "agent:main:hook:ci",
  text: "[ci] deploy 7 finished",
  owner: false,
  provenance: { kind: "system", channel: "hook", label: "ci" },
  input: { isolated: false, announceTo: "telegram:111" },
};

/** An inbox on an in-memory place (opening it again is a restart) and its stored turns, with a runner that records its runs. */
async function open(place: string) {
  const logger = createMemoryLogger();
  const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger }, place));
  const turns = createStoredTurns({ inbox, logger });
  const runs: Array<{ turn: StoredTurn; run: TurnRun }> = [];
  const finishers: Array<(failure?: Error) => void> = [];
  turns.register("hook", {
    run: (turn, run) =>
      new Promise<void>((resolve, reject) => {
        runs.push({ turn, run });
        finishers.push((failure) => (failure ? reject(failure) : resolve()));
      }),
  });
  return { inbox, turns, runs, finishers, logger };
}

describe("createStoredTurns", () => {
  it("stores a turn before it runs, and answers a repeat of its key with the first run while pending, once done and after a reopen", async () => {
    const place = randomUUID();
    const first = await open(place);
    const started = await first.turns.start(TURN, { dedupeKey: "hook:deploy-7" });
    expect(started).toEqual({ status: "new", runId: expect.any(String), sessionKey: TURN.sessionKey });
    // Stored as it runs: the turn itself, in its session, with the run id its runner got.
    expect(first.inbox.pending()).toMatchObject([
      { id: "hook:deploy-7", startedTurn: TURN, sessionKey: TURN.sessionKey },
    ]);
    expect(first.runs).toEqual([
      { turn: TURN, run: { runId: started.runId, resumed: false, markDone: expect.any(Function) } },
    ]);

    const whilePending = await first.turns.start(TURN, { dedupeKey: "hook:deploy-7" });
    expect(whilePending).toEqual({ ...started, status: "pending" });
    first.finishers[0]!();
    await first.turns.idle();
    expect(first.inbox.pending()).toEqual([]);
    expect(await first.turns.start(TURN, { dedupeKey: "hook:deploy-7" })).toEqual({ ...started, status: "done" });

    const reopened = await open(place);
    expect(await reopened.turns.start(TURN, { dedupeKey: "hook:deploy-7" })).toEqual({ ...started, status: "done" });
    expect([...first.runs, ...reopened.runs]).toHaveLength(1);
  });

  it("uses the caller's run id, and hands a turn a restart interrupted back with it, to be replayed with its start counted", async () => {
    const place = randomUUID();
    const first = await open(place);
    await first.turns.start(TURN, { dedupeKey: "client:a-1", runId: "a-1" });
    const reopened = await open(place);
    const [entry] = reopened.inbox.pending();
    expect(entry).toMatchObject({ runId: "a-1", startedTurn: TURN, starts: 1 });
    let counted = 0;
    const replayed = reopened.turns.replay({ ...entry!, startedTurn: entry!.startedTurn! }, async () => {
      counted++;
    });
    expect(reopened.runs).toEqual([
      {
        turn: TURN,
        run: { runId: "a-1", resumed: true, onStart: expect.any(Function), markDone: expect.any(Function) },
      },
    ]);
    await reopened.runs[0]!.run.onStart!();
    expect(counted).toBe(1);
    reopened.finishers[0]!();
    await replayed;
    expect(reopened.inbox.pending()).toEqual([]);
  });

  it("marks a turn whose runner fails done and logs it (not replayed at every start), and gives a turn without a key a fresh entry each time", async () => {
    const { turns, inbox, runs, finishers, logger } = await open(randomUUID());
    await turns.start(TURN);
    await turns.start(TURN);
    expect(runs).toHaveLength(2);
    expect(new Set(inbox.pending().map((entry) => entry.id)).size).toBe(2);
    finishers[0]!(new Error("model exploded"));
    finishers[1]!();
    await turns.idle();
    expect(inbox.pending()).toEqual([]);
    expect(logger.records.some((r) => r.message === "stored turn failed")).toBe(true);
  });

  it("lists a set-aside stored turn by its source and text", async () => {
    const { turns, inbox } = await open(randomUUID());
    const { runId } = await turns.start(TURN, { dedupeKey: "hook:deploy-8" });
    const kept = await inbox.setAside("hook:deploy-8", { reason: "it kept crashing", session: TURN.sessionKey });
    expect(describeSetAside(kept!)).toMatchObject({
      id: "hook:deploy-8",
      runId,
      channel: "hook",
      senderId: "hook",
      sessionKey: TURN.sessionKey,
      text: TURN.text,
    });
    // Set aside, its key is not a new turn either: it answers with that run.
    expect(await turns.start(TURN, { dedupeKey: "hook:deploy-8" })).toEqual({
      status: "done",
      runId,
      sessionKey: TURN.sessionKey,
    });
  });
});

describe("resume (the inbound pipeline at start)", () => {
  it("replays a stored turn a restart interrupted, only marks done one whose announce is in the outbox, and sets aside one that had its 3 starts, telling no chat", async () => {
    const place = randomUUID();
    const first = await open(place);
    await first.turns.start(TURN, { dedupeKey: "hook:a" });
    const announced = await first.turns.start({ ...TURN, text: "announced already" }, { dedupeKey: "hook:b" });
    await first.turns.start({ ...TURN, text: "poison" }, { dedupeKey: "hook:c" });
    await first.inbox.recordStart("hook:c");
    await first.inbox.recordStart("hook:c");

    const reopened = await open(place);
    const { delivered, deliver } = recordingDeliver();
    const pipeline = createInboundPipeline({
      config: parseConfig({}).config,
      // Only messages reach sessions and the runtime; these entries are all stored turns.
      sessions: undefined as never,
      runtime: undefined as never,
      inbox: reopened.inbox,
      turns: reopened.turns,
      deliver,
      handedOver: (key) => key === `${announced.runId}:announce`,
      logger: reopened.logger,
    });
    expect(await pipeline.resume()).toBe(1);
    expect(reopened.runs.map(({ turn, run }) => [turn.text, run.resumed])).toEqual([[TURN.text, true]]);
    expect(reopened.inbox.pending().map((entry) => entry.id)).toEqual(["hook:a"]);
    expect(reopened.inbox.listSetAside().map(describeSetAside)).toMatchObject([
      { id: "hook:c", text: "poison", starts: 3, channel: "hook", sessionKey: TURN.sessionKey },
    ]);
    expect(delivered).toEqual([]);

    // An owner's retry runs it again under its run id (`switchboard inbox retry`).
    const retried = await pipeline.retry("hook:c");
    expect(retried).toEqual({ status: "queued", sessionKey: TURN.sessionKey, runId: expect.any(String) });
    expect(reopened.runs.map(({ turn, run }) => [turn.text, run.runId])).toEqual([
      [TURN.text, expect.any(String)],
      ["poison", retried!.status === "queued" ? retried!.runId : ""],
    ]);
    expect(reopened.inbox.listSetAside()).toEqual([]);
  });
});
