// DM pairing with `cluster.owners: "many"` (docs/scale-out.md "DM pairing in many mode"), through
// the real pipelines, inboxes, stored turns and forward intake of two cores on memory state: the
// receiving core (the global holder: it holds the pairing rows, no session) decides a sender's access
// before it forwards the DM; the session's owner trusts that decision, and sends the pairing
// notices the receiver stored as `notice` turns. The hand-off table between them is an array.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { createAgentRuntime } from "../../src/agents/agent-runtime.js";
import { createLanes } from "../../src/agents/lanes.js";
import { createRunRegistry } from "../../src/agents/run-registry.js";
import type { HandoffRow } from "../../src/cluster/handoff-sql.js";
import type { CommandDispatcher } from "../../src/commands/command-dispatcher.js";
import { STRINGS } from "../../src/commands/command-strings.js";
import { parseConfig } from "../../src/config/index.js";
import { inboxEntryIntake } from "../../src/gateway/inbox-forwarding.js";
import { createInboundPipeline } from "../../src/inbound/handle-inbound.js";
import type { ForwardClaim, ForwardedEntry } from "../../src/inbound/inbox-forward.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { deliverThroughHolder, noticeTurnRunner } from "../../src/inbound/notice-turn.js";
import { type Pairing, createPairing } from "../../src/inbound/pairing.js";
import { openPairingStore } from "../../src/inbound/pairing-store.js";
import { createStoredTurns } from "../../src/inbound/stored-turns.js";
import { createMemoryLogger } from "../../src/logger.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { createAgentSessionsPool } from "../../src/sessions/agent-sessions.js";
import { openMemoryState } from "../../src/state/memory-state.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { onMemoryState } from "../support/memory-state.js";

const { config } = parseConfig({
  channels: { telegram: { owners: ["1"], dmPolicy: "pairing" } },
  session: { dmScope: "per-channel-peer" },
});
const logger = createMemoryLogger();
const parseKey = (raw: string) => parseSessionKey(raw)!;
const dm = (sender: string, text: string, messageId: string) => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender },
  messageId,
  text,
});

/** The `/cron` commands the receiver ran (its stand-in answers them as the scheduler's holder would). */
const cronRan: string[] = [];

/** A stand-in of `/pair approve <code>` on the receiver's pairing control, and of `/cron`; any other text is no command. */
const pairApprove = (pairing: Pairing): CommandDispatcher => ({
  async dispatch({ message, sender }) {
    if (message.text.startsWith("/cron")) {
      cronRan.push(message.text);
      return { reply: `cron on the receiver: ${message.text}` };
    }
    const code = /^\/pair approve (\S+)/.exec(message.text)?.[1];
    if (!code) return null;
    if (!sender.owner) return { reply: "owners only", refused: true };
    const result = await pairing.control.approve(code.toUpperCase(), `telegram:${message.sender.id}`);
    return { reply: result.ok ? `approved ${result.request.senderId}` : `refused: ${result.reason}` };
  },
});

/** The receiving core: holds no session, forwards every entry into `table`; its pairing rows are its own. */
async function receiver(table: ForwardedEntry[]) {
  const forward = async (entry: ForwardedEntry): Promise<ForwardClaim> => {
    const first = table.find((e) => e.dedupeKey === entry.dedupeKey);
    if (!first) table.push(entry);
    const sessionKey = entry.sessionKey ?? entry.session ?? "";
    return { status: "forwarded", runId: (first ?? entry).runId, sessionKey, repeat: first !== undefined };
  };
  const inbox = await createInbox({
    ...onMemoryState({ path: "inbox.json", logger }, `receiver-${Math.random()}`),
    holds: () => false,
    forward,
  });
  const state = openMemoryState();
  const store = await openPairingStore({ state, path: "pairing.json" });
  onTestFinished(() => state.close());
  const turns = createStoredTurns({ inbox, logger });
  const local = recordingDeliver();
  const deliver = deliverThroughHolder({ deliver: local.deliver, holds: () => false, start: turns.start, scope: "s" });
  const pairing = createPairing({ config, store, deliver, parseKey, logger });
  const never = new Proxy({}, { get: () => () => Promise.reject(new Error("nothing runs on the receiver")) });
  const pipeline = createInboundPipeline({
    config,
    sessions: never as never,
    runtime: never as never,
    inbox,
    deliver: local.deliver,
    logger,
    pairing,
    commands: pairApprove(pairing),
  });
  return { pipeline, pairing, store, sentHere: local.delivered };
}

/** A folder of the owner's own (its transcripts are files), removed after the test. */
async function ownerDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-pairing-owner-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The session's owner: holds every session; its pairing rows know nobody (an image loaded before any approval). */
async function owner(dir: string) {
  const sessions = createAgentSessionsPool(
    onMemoryState({ session: config.session, logger, storePathFor: (id: string) => path.join(dir, id) }, dir),
  );
  const { delivered, deliver } = recordingDeliver();
  const model = createScriptedModel([{ text: "hello, paired friend" }]);
  const runtime = createAgentRuntime({
    config,
    sessions,
    logger,
    deliver,
    lanes: createLanes(),
    runs: createRunRegistry(),
    resolveModel: (ref) => ({ model, ref, offline: false }),
  });
  const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger }, dir));
  const turns = createStoredTurns({ inbox, logger });
  turns.register("notice", noticeTurnRunner({ deliver, parseKey }));
  const state = openMemoryState();
  const store = await openPairingStore({ state, path: "pairing.json" });
  const pairing = createPairing({ config, store, deliver, parseKey, logger });
  const pipeline = createInboundPipeline({ config, sessions, runtime, inbox, deliver, logger, pairing, turns });
  const intake = inboxEntryIntake({ start: turns.start, accept: pipeline.accept });
  /** Takes the forwarded entries in, as the owner's drain does, and waits until their work is done. */
  const drain = async (table: ForwardedEntry[]) => {
    for (const { dedupeKey, runId, ...payload } of table.splice(0)) {
      const row: HandoffRow = {
        id: "1",
        kind: "inbox-entry",
        account: "",
        dedupeKey,
        runId,
        payload,
        receivedBy: "a",
        ageMs: 0,
      };
      await intake(row);
    }
    await intake.handled();
    await turns.idle();
  };
  return { drain, delivered, inbox, model, pipeline };
}

describe('DM pairing with cluster.owners "many": decided where the message is received', () => {
  it("gives a stranger whose session another core owns one code, sent by the owner; the forwarded DM carries the refusal and runs nothing", async () => {
    const table: ForwardedEntry[] = [];
    const here = await receiver(table);
    const there = await owner(await ownerDir());
    expect(await here.pipeline.handleInbound(dm("77", "hi", "1"))).toMatchObject({ status: "forwarded" });
    expect(await here.pipeline.handleInbound(dm("77", "hello??", "2"))).toMatchObject({ status: "forwarded" });
    const [request] = here.store.list().pending;
    expect(request).toMatchObject({ senderId: "77", codeSent: true });
    // A notice turn under the code's key, then the two DMs with the receiver's decision: a refusal that asks for no code.
    expect(table.map((e) => e.startedTurn?.source ?? e.message?.text)).toEqual(["notice", "hi", "hello??"]);
    expect(table[0]).toMatchObject({
      dedupeKey: `pairing:${request!.code}:code`,
      sessionKey: "agent:main:telegram:dm:77",
    });
    expect(table[1]!.access).toEqual({
      allowed: false,
      commands: false,
      owner: false,
      needsMention: false,
      reason: "dm-pairing",
    });
    expect(here.sentHere).toEqual([]);
    await there.drain(table);
    expect(there.delivered.map((d) => [d.idempotencyKey, d.target.to, d.kind])).toEqual([
      [`pairing:${request!.code}:code`, "77", "notice"],
    ]);
    expect(there.delivered[0]!.text).toContain(`Pairing code: ${request!.code}`);
    expect(there.model.calls).toHaveLength(0);
  });

  it("lets a sender approved on the receiver in on the owner, whose own pairing rows never heard of them: their next DM runs a turn there", async () => {
    const table: ForwardedEntry[] = [];
    const here = await receiver(table);
    const there = await owner(await ownerDir());
    await here.pipeline.handleInbound(dm("77", "hi", "1"));
    const [request] = here.store.list().pending;
    expect((await here.pairing.control.approve(request!.code, "telegram:1")).ok).toBe(true);
    await here.pipeline.handleInbound(dm("77", "now?", "2"));
    expect(table.at(-1)!.access).toMatchObject({ allowed: true });
    await there.drain(table);
    await vi.waitFor(() => expect(there.delivered).toHaveLength(3));
    expect(there.delivered.map((d) => d.idempotencyKey)).toEqual([
      `pairing:${request!.code}:code`,
      `pairing:${request!.code}:approved`,
      expect.stringMatching(/:reply$/),
    ]);
    expect(there.delivered.at(-1)).toMatchObject({ text: "hello, paired friend", target: { to: "77" } });
  });

  it("keeps the receiver's decision with the stored DM: replayed after a restart, the approved sender's turn runs", async () => {
    const dir = await ownerDir();
    // Stored by the owner's intake, then the process died before handling it.
    const before = await createInbox(onMemoryState({ path: "inbox.json", logger }, dir));
    const allowed = { allowed: true, commands: false, owner: false, needsMention: false };
    const message = { ...dm("77", "after a crash", "5"), accountId: "default" };
    await before.claim("telegram:default:77:5", message as never, {
      session: "agent:main:telegram:dm:77",
      access: allowed,
    });
    const there = await owner(dir);
    expect(there.inbox.pending().map((e) => e.access)).toEqual([allowed]);
    expect(await there.pipeline.resume()).toBe(1);
    await vi.waitFor(() => expect(there.delivered).toHaveLength(1));
    expect(there.delivered[0]).toMatchObject({ text: "hello, paired friend", target: { to: "77" } });
  });

  it("runs /pair where it is received: an owner's /pair approve from a chat another core owns approves on the receiver, and that core answers it", async () => {
    const table: ForwardedEntry[] = [];
    const here = await receiver(table);
    const there = await owner(await ownerDir());
    await here.pipeline.handleInbound(dm("77", "hi", "1"));
    const [request] = here.store.list().pending;
    await here.pipeline.handleInbound(dm("1", `/pair approve ${request!.code.toLowerCase()}`, "2"));
    expect(here.store.list().allowed.map((a) => a.senderId)).toEqual(["77"]);
    expect(table.at(-1)).toMatchObject({ session: "agent:main:telegram:dm:1", outcome: { reply: "approved 77" } });
    await there.drain(table);
    await vi.waitFor(() => expect(there.delivered).toHaveLength(3));
    expect(there.delivered.map((d) => [d.target.to, d.text])).toEqual([
      ["77", expect.stringContaining(request!.code)],
      ["77", STRINGS.pairingApproved],
      ["1", "approved 77"],
    ]);
    expect(there.model.calls).toHaveLength(0);
  });

  it("runs /cron where it is received (the scheduler and the cron rows are the global holder's): the owner's core only sends its answer", async () => {
    const table: ForwardedEntry[] = [];
    const here = await receiver(table);
    const there = await owner(await ownerDir());
    cronRan.length = 0;
    await here.pipeline.handleInbound(dm("1", "/cron rm nightly", "3"));
    expect(cronRan).toEqual(["/cron rm nightly"]);
    expect(table.at(-1)).toMatchObject({
      session: "agent:main:telegram:dm:1",
      outcome: { reply: "cron on the receiver: /cron rm nightly" },
    });
    await there.drain(table);
    await vi.waitFor(() => expect(there.delivered).toHaveLength(1));
    expect(there.delivered.map((d) => [d.target.to, d.text])).toEqual([
      ["1", "cron on the receiver: /cron rm nightly"],
    ]);
    expect(cronRan).toEqual(["/cron rm nightly"]);
    expect(there.model.calls).toHaveLength(0);
  });
});
