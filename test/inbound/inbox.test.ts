import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { InboxWriteError, createInbox, inboundDedupeKey } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { readStateFile } from "../support/read-state-file.js";
import { onLocalState } from "../support/local-state.js";
import { onMemoryState } from "../support/memory-state.js";
import { telegramDm } from "../support/telegram-dm.js";

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-inbox-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, "state", "inbox.json");
}

/** An inbox's place in memory: opening `onMemoryState(deps, place)` again reopens what it holds. */
const memoryInbox = () => ({ place: randomUUID(), file: "inbox.json" });

const dm = (messageId: string, text = "hi"): InboundMessage =>
  telegramDm(text, { messageId, raw: { huge: "x".repeat(100) } });

/** What is on disk now: the snapshot and the journal past it, read as another process would. */
const onDisk = (file: string) => readStateFile(file);

describe("createInbox", () => {
  // On the local port: it checks what is on disk once a claim settles.
  it("stores a new message with its run id before acknowledging it, and knows it again once handled", async () => {
    const file = await tempFile();
    const inbox = await createInbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    const claim = await inbox.claim("telegram:default:42:1", dm("1"), { runId: "run-1" });
    expect(claim).toMatchObject({
      status: "new",
      entry: { id: "telegram:default:42:1", runId: "run-1", dedupeKey: "telegram:default:42:1" },
    });
    // On disk as soon as the claim settles: the message itself, without the platform's raw event.
    const row = (await onDisk(file))["telegram:default:42:1"]!;
    expect(row).toMatchObject({ status: "pending", runId: "run-1", message: { text: "hi", messageId: "1" } });
    expect(row.message).not.toHaveProperty("raw");
    await inbox.complete("telegram:default:42:1");
    expect(await inbox.claim("telegram:default:42:1", dm("1"))).toEqual({ status: "done" });
    expect((await onDisk(file))["telegram:default:42:1"]).toMatchObject({ status: "done" });
  });

  it("answers a repeat of a message still pending with that same entry, not a second one", async () => {
    const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger: createMemoryLogger() }, randomUUID()));
    const first = await inbox.claim("k", dm("1"));
    const again = await inbox.claim("k", dm("1"));
    expect(again).toEqual({ status: "pending", entry: first.status === "new" ? first.entry : undefined });
    expect(inbox.pending()).toHaveLength(1);
  });

  it("lets exactly one of two concurrent claims of a key be new", async () => {
    const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger: createMemoryLogger() }, randomUUID()));
    const results = await Promise.all([inbox.claim("k", dm("1")), inbox.claim("k", dm("1"))]);
    expect(results.map((r) => r.status).sort()).toEqual(["new", "pending"]);
  });

  it("hands back pending messages after a reopen, oldest first, and remembers handled keys", async () => {
    const { file, place } = memoryInbox();
    const first = await createInbox(onMemoryState({ path: file, logger: createMemoryLogger() }, place));
    await first.claim("a", dm("a", "first"), { runId: "r-a" });
    await first.claim("b", dm("b", "second"));
    await first.claim(undefined, dm("c", "no id"), { sessionKey: "agent:main:main" });
    await first.complete("b");
    const reopened = await createInbox(onMemoryState({ path: file, logger: createMemoryLogger() }, place));
    expect(reopened.pending().map((e) => [e.message.text, e.sessionKey])).toEqual([
      ["first", undefined],
      ["no id", "agent:main:main"],
    ]);
    expect(reopened.pending()[0]!.runId).toBe("r-a");
    expect(await reopened.claim("b", dm("b"))).toEqual({ status: "done" });
    // A new claim after the reopen is ordered after the replayed ones.
    await reopened.claim("d", dm("d", "later"));
    expect(reopened.pending().map((e) => e.message.text)).toEqual(["first", "no id", "later"]);
  });

  // On the local port: it checks what is on disk.
  it("drops a handled message without a dedupe key instead of remembering it", async () => {
    const file = await tempFile();
    const inbox = await createInbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    const claim = await inbox.claim(undefined, dm("x"));
    if (claim.status !== "new") throw new Error("expected new");
    await inbox.complete(claim.entry.id);
    expect(await onDisk(file)).toEqual({});
  });

  // On the local port: it checks what is on disk.
  it("forgets handled keys older than retentionMs, never pending ones", async () => {
    const file = await tempFile();
    const clock = createManualClock();
    const inbox = await createInbox(
      onLocalState({ path: file, logger: createMemoryLogger(), now: clock.now, retentionMs: 1_000 }),
    );
    await inbox.claim("old", dm("1"));
    await inbox.complete("old");
    await inbox.claim("waiting", dm("2"));
    clock.advance(2_000);
    await inbox.claim("new", dm("3"));
    await inbox.complete("new");
    expect(Object.keys(await onDisk(file)).sort()).toEqual(["new", "waiting"]);
    expect((await inbox.claim("old", dm("1"))).status).toBe("new");
  });

  it("keeps at most maxKeys handled keys, dropping the oldest first", async () => {
    const clock = createManualClock();
    const inbox = await createInbox(
      onMemoryState({ path: "inbox.json", logger: createMemoryLogger(), now: clock.now, maxKeys: 2 }, randomUUID()),
    );
    for (const key of ["a", "b", "c"]) {
      await inbox.claim(key, dm(key));
      await inbox.complete(key);
      clock.advance(1);
    }
    expect((await inbox.claim("b", dm("b"))).status).toBe("done");
    expect((await inbox.claim("c", dm("c"))).status).toBe("done");
    expect((await inbox.claim("a", dm("a"))).status).toBe("new");
  });

  it("tells onPrune the age its handled keys are kept to: the oldest key kept, or the retention when none is", async () => {
    const clock = createManualClock(10_000);
    const cutoffs: number[] = [];
    const inbox = await createInbox(
      onMemoryState(
        {
          path: "inbox.json",
          logger: createMemoryLogger(),
          now: clock.now,
          retentionMs: 5_000,
          maxKeys: 2,
          onPrune: (cutoff: number) => cutoffs.push(cutoff),
        },
        randomUUID(),
      ),
    );
    expect(cutoffs).toEqual([5_000]);
    for (const key of ["a", "b", "c"]) {
      await inbox.claim(key, dm(key));
      clock.advance(1);
      await inbox.complete(key); // handled at 10,001, 10,002, 10,003
    }
    // Over maxKeys at "c": "a" is dropped, and the run results older than "b" (10,002) go with it.
    expect(cutoffs).toEqual([5_000, 10_002]);
  });

  it("finds the pending entry that runs as a run id (agent.wait on PostgreSQL waits for it), and none once it is done", async () => {
    const clock = createManualClock(10_000);
    const inbox = await createInbox(
      onMemoryState({ path: "inbox.json", logger: createMemoryLogger(), now: clock.now }, randomUUID()),
    );
    const claim = await inbox.claim("m1", dm("1"), { runId: "run-1", sessionKey: "agent:main:main" });
    expect(claim.status).toBe("new");
    expect(inbox.pendingRun("run-1")).toEqual({ sessionKey: "agent:main:main", queuedAt: 10_000 });
    await inbox.complete("m1");
    expect(inbox.pendingRun("run-1")).toBeUndefined();
  });

  it("knows a stored turn's run once it is done (cron asks before it would run a due time again), and no other", async () => {
    const inbox = await createInbox(onMemoryState({ path: "inbox.json", logger: createMemoryLogger() }, randomUUID()));
    const turn = {
      source: "cron" as const,
      sessionKey: "agent:main:main",
      text: "brief",
      owner: false,
      provenance: { kind: "channel" as const, channel: "cron" },
      input: {},
    };
    await inbox.claimTurn("cron:brief:1000", turn, { runId: "run-c" });
    expect(inbox.handledRun("run-c")).toBe(false);
    await inbox.complete("cron:brief:1000");
    expect(inbox.handledRun("run-c")).toBe(true);
    expect(inbox.handledRun("run-other")).toBe(false);
  });

  // On the local port: it migrates an old dedupe file on disk.
  it("imports the keys of the earlier dedupe file once and removes it", async () => {
    const file = await tempFile();
    const legacy = path.join(path.dirname(file), "inbound-dedupe.json");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(legacy, JSON.stringify({ "telegram:default:42:7": Date.now() }));
    const inbox = await createInbox(
      onLocalState({ path: file, legacyDedupePath: legacy, logger: createMemoryLogger() }),
    );
    expect(await inbox.claim("telegram:default:42:7", dm("7"))).toEqual({ status: "done" });
    expect(await readdir(path.dirname(file))).not.toContain("inbound-dedupe.json");
  });

  // On the local port: it is about a corrupt file set aside on disk.
  it("moves a corrupt file aside, logs it and starts empty", async () => {
    const file = await tempFile();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "{ not json");
    const logger = createMemoryLogger();
    const inbox = await createInbox(onLocalState({ path: file, logger }));
    expect((await inbox.claim("k", dm("1"))).status).toBe("new");
    const moved = (await readdir(path.dirname(file))).filter((name) => name.startsWith("inbox.json.corrupt-"));
    expect(moved).toHaveLength(1);
    expect(await readFile(path.join(path.dirname(file), moved[0]!), "utf8")).toBe("{ not json");
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "error", fields: expect.objectContaining({ file }) }),
    );
  });

  // On the local port: it is about a write the disk refuses.
  it("rejects a claim it could not write with InboxWriteError", async () => {
    const file = await tempFile();
    const inbox = await createInbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    // The state folder becomes a plain file: no write can succeed.
    await rm(path.dirname(file), { recursive: true, force: true });
    await writeFile(path.dirname(file), "not a folder");
    await expect(inbox.claim("k", dm("1"))).rejects.toBeInstanceOf(InboxWriteError);
    // Not stored means not known: once the disk is back, the redelivery is a new message.
    expect(inbox.pending()).toEqual([]);
    await rm(path.dirname(file), { force: true });
    expect((await inbox.claim("k", dm("1"))).status).toBe("new");
  });
});

describe("inboundDedupeKey", () => {
  it("joins channel, account, chat and message id", () => {
    const message = InboundMessageSchema.parse({
      channel: "Telegram",
      chat: { type: "group", id: -100123 },
      sender: { id: 7 },
      messageId: 55,
    });
    expect(inboundDedupeKey(message)).toBe("telegram:default:-100123:55");
  });

  it("keeps accounts apart", () => {
    const message = InboundMessageSchema.parse({
      channel: "discord",
      accountId: "work",
      chat: { type: "channel", id: "c1" },
      sender: { id: "u1" },
      messageId: "m1",
    });
    expect(inboundDedupeKey(message)).toBe("discord:work:c1:m1");
  });

  it("is undefined for a message without a message id", () => {
    const message = InboundMessageSchema.parse({
      channel: "telegram",
      chat: { type: "direct", id: "42" },
      sender: { id: "42" },
    });
    expect(inboundDedupeKey(message)).toBeUndefined();
  });
});
