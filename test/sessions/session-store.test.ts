import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { createSessionStore } from "../../src/sessions/session-store.js";
import { runAndKill } from "../support/run-and-kill.js";
import { onLocalState } from "../support/local-state.js";
import { onMemoryState } from "../support/memory-state.js";

async function tempStore(content?: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-store-"));
  const file = path.join(dir, "sessions.json");
  if (content !== undefined) await writeFile(file, content);
  return { dir, file };
}

/** A store's place in memory: opening `onMemoryState(deps, place)` again reopens what it holds. */
const memoryStore = () => ({ place: randomUUID(), file: "sessions.json" });

// No file lock, mtime cache or field-wise merge of concurrent writers: one gateway process owns the
// store and patches it in memory.
const entry = (sessionId: string, updatedAt: number, extra: Record<string, unknown> = {}) => ({
  sessionId,
  updatedAt,
  ...extra,
});

describe("createSessionStore", () => {
  it("persists patches that change only the fields they name", async () => {
    const { file, place } = memoryStore();
    const store = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    await store.patch("agent:main:main", () => entry("s1", 10, { thinkingLevel: "high", label: "keep" }));
    await store.patch("agent:main:main", () => ({ thinkingLevel: undefined, model: "offline/echo" }));
    const reopened = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    expect(reopened.get("agent:main:main")).toEqual({
      sessionId: "s1",
      updatedAt: 10,
      label: "keep",
      model: "offline/echo",
    });
  });

  it("finds an entry by any spelling of its key and by sessionId", async () => {
    const { file, place } = memoryStore();
    const store = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    await store.patch("Agent:Main:Telegram:Group:-100:Topic:9", () => entry("s9", 1));
    expect(store.get("agent:main:telegram:group:-100:topic:9")?.sessionId).toBe("s9");
    expect(store.findBySessionId("s9")?.key).toBe("agent:main:telegram:group:-100:topic:9");
    expect(store.findBySessionId("nope")).toBeUndefined();
  });

  // On the local port: it is about sessions.json on disk.
  it("keeps every patch of a burst and writes sessions.json in full when closed", async () => {
    const { file } = await tempStore();
    const store = await createSessionStore(onLocalState({ path: file, keys: {}, logger: createMemoryLogger() }));
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.patch(`agent:main:whatsapp:dm:+${i}`, () => entry(`s${i}`, i))),
    );
    await store.close();
    const onDisk = JSON.parse(await readFile(file, "utf8"));
    expect(Object.keys(onDisk)).toHaveLength(200);
    expect(onDisk["agent:main:whatsapp:dm:+199"]).toEqual({ sessionId: "s199", updatedAt: 199 });
  });

  it("applies concurrent patches of one entry and of different entries, none undoing another", async () => {
    const { file, place } = memoryStore();
    const store = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    await store.patch("agent:main:main", () => entry("s1", 1));
    await store.patch("agent:main:dm:old", () => entry("o", 1));
    // Each starts after the given number of event-loop turns, while the writes before it are in flight.
    const later = async (turns: number, fn: () => Promise<unknown>) => {
      for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
      return fn();
    };
    await Promise.all([
      later(8, () => store.patch("agent:main:main", () => ({ modelOverride: "gpt-4o" }))),
      later(2, () => store.patch("agent:main:main", () => ({ thinkingLevel: "high" }))),
      later(1, () => store.delete("agent:main:dm:old")),
      later(4, () => store.patch("agent:main:dm:new", () => entry("n", 2))),
    ]);
    const reopened = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    expect(reopened.get("agent:main:main")).toEqual(entry("s1", 1, { modelOverride: "gpt-4o", thinkingLevel: "high" }));
    expect(
      reopened
        .list()
        .map((r) => r.key)
        .sort(),
    ).toEqual(["agent:main:dm:new", "agent:main:main"]);
  });

  it("refuses a patch that would make an invalid entry, leaving the store as it was", async () => {
    const { file, place } = memoryStore();
    const store = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger() }, place),
    );
    await expect(store.patch("agent:main:main", () => ({ label: "no id" }))).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(store.patch("   ", () => entry("x", 1))).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
    expect(store.get("agent:main:main")).toBeUndefined();
  });

  it("lists newest first, filtering by kind, activity and agent before the limit", async () => {
    const { file, place } = memoryStore();
    const now = 1_000_000_000;
    const store = await createSessionStore(
      onMemoryState({ path: file, keys: {}, logger: createMemoryLogger(), now: () => now }, place),
    );
    await store.patch("agent:main:main", () => entry("a", now - 5 * 60_000));
    await store.patch("agent:main:cron:job-1", () => entry("b", now - 1 * 60_000));
    await store.patch("agent:ops:discord:channel:c1", () => entry("c", now - 30 * 60_000));
    await store.patch("agent:main:telegram:group:-1", () => entry("d", now - 2 * 60_000));
    expect(store.list().map((r) => r.entry.sessionId)).toEqual(["b", "d", "a", "c"]);
    expect(store.list({ kinds: ["cron"] }).map((r) => r.key)).toEqual(["agent:main:cron:job-1"]);
    expect(store.list({ activeMinutes: 10, limit: 2 }).map((r) => r.entry.sessionId)).toEqual(["b", "d"]);
    expect(store.list({ agentId: "ops" }).map((r) => r.entry.sessionId)).toEqual(["c"]);
  });

  // On the local port: its last check reads sessions.json on disk.
  it("deletes the entry and hands its transcript to be set aside", async () => {
    const { file } = await tempStore();
    const removed: string[] = [];
    const store = await createSessionStore(
      onLocalState({
        path: file,
        keys: {},
        logger: createMemoryLogger(),
        removeTranscript: async (e: { sessionId: string }) => void removed.push(e.sessionId),
      }),
    );
    await store.patch("agent:main:main", () => entry("s1", 1));
    expect(await store.delete("agent:main:main")).toBe(true);
    expect(await store.delete("agent:main:main")).toBe(false);
    expect(removed).toEqual(["s1"]);
    await store.close();
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({});
  });

  // On the local port: it is about a corrupt file set aside on disk.
  it("moves a corrupt file aside, reports it, and starts empty without touching the copy", async () => {
    const broken = '{ "agent:main:main": { "sessionId": "precious", "updatedAt": 1 }, oops';
    const { file, dir } = await tempStore(broken);
    const logger = createMemoryLogger();
    const deps = onLocalState({
      path: file,
      keys: {},
      logger,
      now: () => Date.UTC(2026, 10, 22, 4, 5, 6),
    });
    const store = await createSessionStore(deps);
    expect(store.report.corruptMovedTo).toBe(`${file}.corrupt-2026-11-22T04-05-06-000Z`);
    expect(await readFile(store.report.corruptMovedTo!, "utf8")).toBe(broken);
    expect(store.size()).toBe(0);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "error", message: expect.stringContaining("corrupt") }),
    );
    await store.patch("agent:main:main", () => entry("new", 2));
    await store.close();
    await deps.state.close();
    expect((await readdir(dir)).sort()).toEqual([
      "sessions.json",
      "sessions.json.corrupt-2026-11-22T04-05-06-000Z",
      "sessions.json.meta",
    ]);
  });

  // On the local port: it is about a corrupt file on disk.
  it("treats a file holding an array as corrupt rather than overwriting it", async () => {
    const { file } = await tempStore("[]");
    const store = await createSessionStore(onLocalState({ path: file, keys: {}, logger: createMemoryLogger() }));
    expect(store.report.corruptMovedTo).toMatch(/sessions\.json\.corrupt-/);
  });

  // On the local port: it checks the invalid row is still in the file.
  it("keeps an invalid row in the file, skips it on read and refuses to patch it", async () => {
    const { file } = await tempStore(
      JSON.stringify({ "agent:main:main": { updatedAt: 1 }, "agent:main:dm:1": entry("ok", 1) }),
    );
    const logger = createMemoryLogger();
    const store = await createSessionStore(onLocalState({ path: file, keys: {}, logger }));
    expect(store.get("agent:main:main")).toBeUndefined();
    expect(store.list().map((r) => r.key)).toEqual(["agent:main:dm:1"]);
    await expect(store.patch("agent:main:main", () => entry("x", 2))).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await store.patch("agent:main:dm:1", () => ({ label: "l" }));
    await store.close();
    expect(JSON.parse(await readFile(file, "utf8"))["agent:main:main"]).toEqual({ updatedAt: 1 });
    expect(logger.records.some((r) => r.level === "warn" && r.fields.sessionKey === "agent:main:main")).toBe(true);
  });

  // On the local port: it migrates an old sessions.json file and checks its backup on disk.
  it("migrates legacy keys on load, keeps a backup, and logs the row a collision dropped", async () => {
    const legacy = {
      main: entry("old-main", 10),
      "agent:main:main": entry("new-main", 20),
      "group:120363@g.us": entry("wa", 5, { provider: "whatsapp", room: "#x" }),
      "Cron:Job-1": entry("cron", 7),
    };
    const { file } = await tempStore(JSON.stringify(legacy));
    const logger = createMemoryLogger();
    const store = await createSessionStore(onLocalState({ path: file, keys: {}, logger, now: () => 0 }));
    expect(store.get("agent:main:main")?.sessionId).toBe("new-main");
    expect(store.get("agent:main:whatsapp:group:120363@g.us")).toEqual(
      entry("wa", 5, { channel: "whatsapp", groupChannel: "#x" }),
    );
    expect(store.get("agent:main:cron:job-1")?.sessionId).toBe("cron");
    expect(JSON.parse(await readFile(store.report.backup!, "utf8"))).toEqual(legacy);
    expect(Object.keys(JSON.parse(await readFile(file, "utf8"))).sort()).toEqual([
      "agent:main:cron:job-1",
      "agent:main:main",
      "agent:main:whatsapp:group:120363@g.us",
    ]);
    const dropped = logger.records.find((r) => r.message.includes("two stored sessions became one key"));
    expect(dropped?.fields).toMatchObject({
      key: "agent:main:main",
      keptFrom: "agent:main:main",
      droppedFrom: "main",
      dropped: entry("old-main", 10),
    });
  });
});

describe("createSessionStore crash safety", () => {
  const runAndKillWriter = (file: string, start: number, killAfterMs: number) =>
    runAndKill("store-writer.ts", [file, String(start)], killAfterMs);

  // On the local port: a killed writer process and the files it leaves.
  it("keeps every acknowledged patch across 20 SIGKILLs, for a reader and for the next writer", async () => {
    const { file } = await tempStore();
    let start = 0;
    let totalAcked = 0;
    const allAcked: number[] = [];
    for (let round = 0; round < 20; round++) {
      const acked = await runAndKillWriter(file, start, 5 + Math.floor(Math.random() * 60));
      start += 1_000_000;
      totalAcked += acked.length;
      allAcked.push(...acked);
      // What `switchboard sessions` sees (snapshot + journal, nothing written), then what the next gateway sees.
      for (const readOnly of [true, false]) {
        const store = await createSessionStore(
          onLocalState({ path: file, keys: {}, logger: createMemoryLogger(), readOnly }),
        );
        // Each key holds the newest patch written to it; every acknowledged patch is there or superseded.
        for (const i of allAcked) {
          const row = store.get(`agent:main:telegram:dm:${i % 50}`);
          expect(row, `ack ${i} lost in round ${round}`).toBeDefined();
          expect(row!.updatedAt).toBeGreaterThanOrEqual(i);
        }
        await store.close();
      }
    }
    expect(totalAcked).toBeGreaterThan(0);
  }, 180_000);
});
