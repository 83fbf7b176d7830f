import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import type { InboundMessage } from "../../src/routing/index.js";
import { onLocalState } from "../support/local-state.js";
import { onMemoryState } from "../support/memory-state.js";
import { telegramDm } from "../support/telegram-dm.js";

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-inbox-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, "state", "inbox.json");
}

const dm = (messageId: string): InboundMessage => telegramDm("hi", { messageId });

const open = (file: string) => createInbox(onLocalState({ path: file, logger: createMemoryLogger() }));
/** The inbox on an in-memory port kept under `place`: opening it again reopens what it holds. */
const openInMemory = (place: string) =>
  createInbox(onMemoryState({ path: "inbox.json", logger: createMemoryLogger() }, place));
const KEY = "telegram:default:42:1";

describe("the inbox's start count and set-aside entries", () => {
  // On the local port: its name promises the count on disk.
  it("counts the arrival as start 1 and each recorded start on disk, across a reopen", async () => {
    const file = await tempFile();
    const inbox = await open(file);
    await inbox.claim(KEY, dm("1"));
    expect(inbox.pending()[0]!.starts).toBe(1);
    await inbox.recordStart(KEY);
    await inbox.recordStart(KEY);
    await inbox.close();
    expect((await open(file)).pending()[0]!.starts).toBe(3);
  });

  // On the local port: its name promises the count on disk.
  it("takes back the start of every pending message at a graceful stop, on disk, never below 0", async () => {
    const file = await tempFile();
    const inbox = await open(file);
    await inbox.claim(KEY, dm("1"));
    await inbox.recordStart(KEY);
    await inbox.forgiveInterruptedStarts();
    await inbox.forgiveInterruptedStarts();
    await inbox.forgiveInterruptedStarts();
    await inbox.close();
    expect((await open(file)).pending()[0]!.starts).toBe(0);
  });

  // On the local port: it edits the stored file to an earlier version's row.
  it("reads a pending row of an earlier version (no count) as started once", async () => {
    const file = await tempFile();
    const inbox = await open(file);
    await inbox.claim(KEY, dm("1"));
    await inbox.close();
    const text = await readFile(file, "utf8");
    expect(text).toContain('"starts":1');
    await writeFile(file, text.replace('"starts":1,', "").replace(',"starts":1', ""));
    const reopened = await open(file);
    expect(reopened.pending()).toMatchObject([{ id: KEY, starts: 1 }]);
  });

  it("keeps a set-aside entry across a reopen, never replays it, and treats its redelivery as handled", async () => {
    const place = randomUUID();
    const inbox = await openInMemory(place);
    await inbox.claim(KEY, dm("1"));
    await inbox.setAside(KEY, { reason: "it kept crashing", session: "agent:main:main" });
    await inbox.close();
    const reopened = await openInMemory(place);
    expect(reopened.pending()).toEqual([]);
    expect(reopened.listSetAside()).toMatchObject([
      { id: KEY, starts: 1, reason: "it kept crashing", session: "agent:main:main" },
    ]);
    expect(await reopened.claim(KEY, dm("1"))).toEqual({ status: "done" });
  });

  it("retry makes it pending with no starts counted; drop forgets it but keeps its dedupe key", async () => {
    const place = randomUUID();
    const inbox = await openInMemory(place);
    await inbox.claim(KEY, dm("1"));
    await inbox.claim("telegram:default:42:2", dm("2"));
    await inbox.setAside(KEY, { reason: "r" });
    await inbox.setAside("telegram:default:42:2", { reason: "r" });
    expect(await inbox.retry(KEY)).toMatchObject({ id: KEY, starts: 0 });
    expect(await inbox.retry(KEY)).toBeUndefined();
    expect(await inbox.drop("telegram:default:42:2")).toBe(true);
    expect(await inbox.drop("telegram:default:42:2")).toBe(false);
    await inbox.close();
    const reopened = await openInMemory(place);
    expect(reopened.pending()).toMatchObject([{ id: KEY, starts: 0 }]);
    expect(reopened.listSetAside()).toEqual([]);
    expect(await reopened.claim("telegram:default:42:2", dm("2"))).toEqual({ status: "done" });
  });
});
