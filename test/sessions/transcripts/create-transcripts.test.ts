import { appendFile, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "../../../src/errors.js";
import { createMemoryLogger } from "../../../src/logger.js";
import {
  createTranscripts,
  type TranscriptMessageInput,
  type Transcripts,
} from "../../../src/sessions/transcripts/index.js";
import { transcriptId } from "../../../src/sessions/transcripts/transcript-path.js";
import { runAndKill } from "../../support/run-and-kill.js";

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const invalidArgument = expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT });

let dir: string;
let logger: ReturnType<typeof createMemoryLogger>;
let transcripts: Transcripts;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "switchboard-transcripts-"));
  logger = createMemoryLogger();
  transcripts = createTranscripts({ dir, logger, now: () => NOW });
});
afterEach(async () => {
  await transcripts.close();
  await rm(dir, { recursive: true, force: true });
});

const user = (text: string): TranscriptMessageInput => ({ role: "user", content: text });
const texts = (messages: readonly { content: unknown }[]) => messages.map((m) => m.content);
const lines = async (file: string) => (await readFile(path.join(dir, file), "utf8")).split("\n");
const warnings = () => logger.records.filter((r) => r.level === "warn");

describe("createTranscripts append", () => {
  it("writes a header once, then one JSON line per message", async () => {
    await transcripts.append("s1", user("a"), { cwd: "/work" });
    await transcripts.append("s1", user("b"));
    const [header, first, second, rest] = await lines("s1.jsonl");
    expect(JSON.parse(header!)).toEqual({
      type: "session",
      version: 1,
      id: "s1",
      timestamp: "2026-01-02T03:04:05.678Z",
      cwd: "/work",
    });
    expect(JSON.parse(first!)).toEqual({
      type: "message",
      timestamp: "2026-01-02T03:04:05.678Z",
      message: { role: "user", content: "a", timestamp: NOW },
    });
    expect(JSON.parse(second!).message.content).toBe("b");
    expect(rest).toBe("");
  });

  it("writes whole lines in call order when many appends run at once", async () => {
    const padding = (i: number) => "x".repeat((i * 7919) % 5000);
    await Promise.all(Array.from({ length: 200 }, (_, i) => transcripts.append("s1", user(`m${i} ${padding(i)}`))));
    const [header, ...rest] = (await lines("s1.jsonl")).slice(0, -1);
    expect(JSON.parse(header!).type).toBe("session");
    expect(rest.map((line) => JSON.parse(line).message.content)).toEqual(
      Array.from({ length: 200 }, (_, i) => `m${i} ${padding(i)}`),
    );
  });

  it("keeps fields it does not know and an explicit timestamp", async () => {
    const message = {
      role: "assistant" as const,
      content: [{ type: "text", text: "hi" }],
      timestamp: 5,
      stopReason: "injected",
      provenance: { kind: "session" as const, sessionKey: "agent:main:main", hop: 1 },
    };
    await transcripts.append("s1", message);
    expect((await transcripts.readTail("s1", { limit: 1 })).messages).toEqual([message]);
  });

  it("writes topic sessions to <id>-topic-<encoded id>.jsonl with the session id in the header", async () => {
    const id = transcriptId("s1", "abc/def");
    await transcripts.append(id, user("a"));
    expect(await readdir(dir)).toEqual(["s1-topic-abc%2Fdef.jsonl"]);
    expect((await transcripts.readHeader(id))?.id).toBe("s1");
  });

  it("records parentSession in the header of a forked session", async () => {
    await transcripts.append("child", user("a"), { parentSession: "parent.jsonl", cwd: "/w" });
    expect(await transcripts.readHeader("child")).toMatchObject({ id: "child", parentSession: "parent.jsonl" });
  });

  it("creates the folder and a file only its owner can read", async () => {
    const nested = createTranscripts({ dir: path.join(dir, "agents", "main", "sessions"), logger });
    await nested.append("s1", user("a"));
    expect((await stat(nested.location("s1"))).mode & 0o777).toBe(0o600);
    await nested.close();
  });

  it("refuses an invalid message and writes nothing", async () => {
    await expect(transcripts.append("s1", { role: "robot", content: "x" } as never)).rejects.toThrow(invalidArgument);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each(["../x", "a/b", "..", "", "a".repeat(200), "../escape.jsonl"])("refuses the session id %j", async (ref) => {
    await expect(transcripts.append(ref, user("a"))).rejects.toThrow(invalidArgument);
    await expect(transcripts.readTail(ref, { limit: 1 })).rejects.toThrow(invalidArgument);
    await expect(transcripts.remove(ref)).rejects.toThrow(invalidArgument);
  });
});

describe("createTranscripts readTail", () => {
  const conversation: TranscriptMessageInput[] = [
    user("q1"),
    { role: "toolCall", content: [{ type: "toolCall", id: "c1", name: "weather", arguments: {} }] },
    { role: "toolResult", content: [{ type: "toolResult", toolCallId: "c1", content: "sunny" }] },
    { role: "assistant", content: "a1" },
    { role: "system", content: "note" },
  ];

  async function appendAll(ref: string, messages: readonly TranscriptMessageInput[]) {
    for (const message of messages) await transcripts.append(ref, message);
  }

  it("returns an empty page for a missing file", async () => {
    expect(await transcripts.readTail("nobody", { limit: 5 })).toEqual({ messages: [], hasMore: false });
  });

  it("returns every message oldest first, without tool messages by default", async () => {
    await appendAll("s1", conversation);
    expect(await transcripts.readTail("s1", { limit: 10 })).toEqual({
      messages: [
        expect.objectContaining({ content: "q1" }),
        expect.objectContaining({ content: "a1" }),
        expect.objectContaining({ content: "note" }),
      ],
      hasMore: false,
    });
    expect((await transcripts.readTail("s1", { limit: 10, includeTools: true })).messages.map((m) => m.role)).toEqual([
      "user",
      "toolCall",
      "toolResult",
      "assistant",
      "system",
    ]);
  });

  it("returns the newest `limit` messages with a cursor when older ones exist", async () => {
    await appendAll("s1", ["m0", "m1", "m2", "m3", "m4"].map(user));
    const page = await transcripts.readTail("s1", { limit: 3 });
    expect(texts(page.messages)).toEqual(["m2", "m3", "m4"]);
    expect(page.hasMore).toBe(true);
    expect(typeof page.cursor).toBe("string");
  });

  it("reports no more pages when the oldest message is exactly on this page", async () => {
    await appendAll("s1", conversation);
    const page = await transcripts.readTail("s1", { limit: 3 });
    expect(page).toEqual({ messages: expect.any(Array), hasMore: false });
  });

  it.each([
    ["the default chunk size", undefined],
    ["a 4 KiB chunk size", 4096],
  ])("pages backwards over lines longer than a chunk, returning each message once, with %s", async (_, chunkSize) => {
    const reader = createTranscripts({ dir, logger, now: () => NOW, ...(chunkSize ? { chunkSize } : {}) });
    const all: TranscriptMessageInput[] = [];
    for (let i = 0; i < 30; i++) {
      const size = i % 7 === 3 ? 200_000 : i % 5 === 0 ? 70_000 : 20 + i;
      all.push(i % 4 === 2 ? { role: "toolResult", content: `t${i}` } : user(`m${i}:${"y".repeat(size)}`));
    }
    await appendAll("s1", all);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 30; pages++) {
      const page = await reader.readTail("s1", { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.unshift(...texts(page.messages));
      expect(page.cursor !== undefined).toBe(page.hasMore);
      if (!page.hasMore) break;
      cursor = page.cursor;
    }
    expect(seen).toEqual(all.filter((m) => m.role !== "toolResult").map((m) => m.content));
    expect(warnings()).toEqual([]);
  });

  it("pages with includeTools over every message", async () => {
    await appendAll("s1", conversation);
    const newest = await transcripts.readTail("s1", { limit: 2, includeTools: true });
    const older = await transcripts.readTail("s1", { limit: 10, includeTools: true, cursor: newest.cursor! });
    expect(older.messages.map((m) => m.role)).toEqual(["user", "toolCall", "toolResult"]);
    expect(older.hasMore).toBe(false);
  });

  it("stops reading once it has found the messages it needs", async () => {
    const file = path.join(dir, "s1.jsonl");
    await writeFile(file, "garbage that would be warned about\n".repeat(5_000));
    await appendAll("s1", ["m0", "m1", "m2", "m3"].map(user));
    expect(await transcripts.readTail("s1", { limit: 2 })).toMatchObject({ hasMore: true });
    expect(warnings()).toEqual([]);
  });

  it("never sees half a line while appends of large messages run", async () => {
    const big = (i: number) => `m${i}:${"z".repeat(100_000)}`;
    const appends = Array.from({ length: 40 }, (_, i) => transcripts.append("s1", user(big(i))));
    const reads = Array.from({ length: 40 }, () => transcripts.readTail("s1", { limit: 3 }));
    await Promise.all(appends);
    for (const page of await Promise.all(reads)) {
      const indexes = page.messages.map((m) => Number(String(m.content).slice(1, String(m.content).indexOf(":"))));
      expect(indexes).toEqual(indexes.map((_, k) => indexes[0]! + k));
    }
    expect(warnings()).toEqual([]);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses the limit %s", async (limit) => {
    await expect(transcripts.readTail("s1", { limit })).rejects.toThrow(invalidArgument);
  });

  it("refuses a cursor it did not issue, or one that no longer fits the file", async () => {
    await appendAll("s1", ["m0", "m1"].map(user));
    await expect(transcripts.readTail("s1", { limit: 1, cursor: "garbage!" })).rejects.toThrow(invalidArgument);
    const beyond = Buffer.from(JSON.stringify({ o: 1e9 })).toString("base64url");
    await expect(transcripts.readTail("s1", { limit: 1, cursor: beyond })).rejects.toThrow(/past the end/);
    const midLine = Buffer.from(JSON.stringify({ o: 5 })).toString("base64url");
    await expect(transcripts.readTail("s1", { limit: 1, cursor: midLine })).rejects.toThrow(/start of a line/);
  });

  it("skips a torn last line with a warning, and the first append after a restart leaves a readable file", async () => {
    await appendAll("s1", ["m0", "m1"].map(user));
    const file = transcripts.location("s1");
    const tornAt = (await stat(file)).size;
    // A crash in the middle of an append: the process is gone and the file ends with part of a line.
    await transcripts.close();
    await appendFile(file, '{"type":"message","timestamp":"2026-01-0');
    const restarted = createTranscripts({ dir, logger, now: () => NOW });
    expect(texts((await restarted.readTail("s1", { limit: 10 })).messages)).toEqual(["m0", "m1"]);
    expect(warnings()).toEqual([
      {
        level: "warn",
        fields: expect.objectContaining({ file, offset: tornAt }),
        message: expect.stringContaining("torn last transcript line"),
      },
    ]);

    await restarted.append("s1", user("m2"));
    expect(texts((await restarted.readTail("s1", { limit: 10 })).messages)).toEqual(["m0", "m1", "m2"]);
    await restarted.close();
    expect(warnings().map((w) => w.message)).toEqual([
      expect.stringContaining("torn last transcript line"),
      expect.stringContaining("did not end with a newline"),
      expect.stringContaining("skipping unreadable transcript line"),
    ]);
  });

  it("reads a last line that is whole but has no newline, and keeps it whole on the next append", async () => {
    const file = path.join(dir, "s1.jsonl");
    await writeFile(
      file,
      `{"type":"session","version":1,"id":"s1","timestamp":"t","cwd":"/"}\n{"type":"message","message":{"role":"user","content":"m0","timestamp":1}}`,
    );
    expect(texts((await transcripts.readTail("s1", { limit: 10 })).messages)).toEqual(["m0"]);
    await transcripts.append("s1", user("m1"));
    expect(texts((await transcripts.readTail("s1", { limit: 10 })).messages)).toEqual(["m0", "m1"]);
  });

  it("skips a corrupt line in the middle with a warning naming the file and byte offset", async () => {
    await transcripts.append("s1", user("m0"));
    const file = transcripts.location("s1");
    const badAt = (await stat(file)).size;
    await appendFile(file, 'not json\n{"type":"message","message":{"role":"user"}}\n');
    await transcripts.append("s1", user("m1"));
    expect(texts((await transcripts.readTail("s1", { limit: 10 })).messages)).toEqual(["m0", "m1"]);
    expect(warnings().map((w) => [w.fields.file, w.fields.offset])).toEqual([
      [file, badAt + "not json\n".length],
      [file, badAt],
    ]);
  });
});

describe("createTranscripts open files", () => {
  /** Descriptors of this process that point into the transcript folder (Linux: /proc/self/fd). */
  async function openInFolder(): Promise<string[]> {
    const found: string[] = [];
    for (const fd of await readdir("/proc/self/fd")) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
      if (target.startsWith(`${dir}${path.sep}`)) found.push(path.basename(target));
    }
    return found.sort();
  }

  it("writes the same file with its handle kept open as a file reopened for every line", async () => {
    const reopened = createTranscripts({
      dir: path.join(dir, "one-at-a-time"),
      logger,
      now: () => NOW,
      maxOpenFiles: 0,
    });
    for (let i = 0; i < 300; i++) {
      const message = i % 3 === 2 ? { role: "assistant" as const, content: `é ${i}` } : user(`m${i}`);
      await transcripts.append("s1", message, { cwd: "/w" });
      await reopened.append("s1", message, { cwd: "/w" });
    }
    const kept = await readFile(transcripts.location("s1"), "utf8");
    expect(kept).toBe(await readFile(reopened.location("s1"), "utf8"));
    const rows = kept.split("\n");
    expect(rows).toHaveLength(302);
    expect(JSON.parse(rows[0]!)).toMatchObject({ type: "session", id: "s1", cwd: "/w" });
    expect(JSON.parse(rows[300]!).message).toEqual({ role: "assistant", content: "é 299", timestamp: NOW });
    await reopened.close();
    expect(await openInFolder()).toEqual(["s1.jsonl"]);
  });

  it("appends to a new file after the transcript was set aside, never to the archived one", async () => {
    await transcripts.append("s1", user("before"));
    const archived = transcripts.location((await transcripts.remove("s1"))!);
    const archivedText = await readFile(archived, "utf8");
    await transcripts.append("s1", user("after"));
    expect(await readFile(archived, "utf8")).toBe(archivedText);
    const fresh = await lines("s1.jsonl");
    expect(JSON.parse(fresh[0]!).type).toBe("session");
    expect(fresh.slice(1, -1).map((line) => JSON.parse(line).message.content)).toEqual(["after"]);
  });

  it("waits for appends in flight when closing, and leaves no file open", async () => {
    const appends = Array.from({ length: 20 }, (_, i) => transcripts.append(`s${i % 4}`, user(`m${i}`)));
    await transcripts.close();
    await Promise.all(appends);
    expect(await openInFolder()).toEqual([]);
    for (let i = 0; i < 4; i++) expect((await transcripts.readTail(`s${i}`, { limit: 10 })).messages).toHaveLength(5);
  });

  it("keeps at most maxOpenFiles files open, and none after close", async () => {
    const few = createTranscripts({ dir, logger, now: () => NOW, maxOpenFiles: 3 });
    for (let round = 0; round < 3; round++)
      await Promise.all(Array.from({ length: 8 }, (_, i) => few.append(`s${i}`, user(`r${round}`))));
    await few.append("s7", user("last"));
    // Eviction closes in the background; the newest files stay open.
    await expect.poll(openInFolder).toHaveLength(3);
    expect(await openInFolder()).toContain("s7.jsonl");
    for (let i = 0; i < 8; i++)
      expect(texts((await few.readTail(`s${i}`, { limit: 5 })).messages)).toEqual(
        i === 7 ? ["r0", "r1", "r2", "last"] : ["r0", "r1", "r2"],
      );
    await few.close();
    expect(await openInFolder()).toEqual([]);
    // A later append opens its file again.
    await few.append("s0", user("again"));
    expect(texts((await few.readTail("s0", { limit: 1 })).messages)).toEqual(["again"]);
    await few.close();
    expect(await openInFolder()).toEqual([]);
  });
});

describe("createTranscripts readHeader", () => {
  it("returns undefined for a missing file", async () => {
    expect(await transcripts.readHeader("nobody")).toBeUndefined();
  });

  it("returns undefined with a warning when the first line is not a header", async () => {
    await writeFile(
      path.join(dir, "s1.jsonl"),
      '{"type":"message","message":{"role":"user","content":"x","timestamp":1}}\n',
    );
    expect(await transcripts.readHeader("s1")).toBeUndefined();
    expect(warnings()).toHaveLength(1);
  });
});

describe("createTranscripts remove", () => {
  it("renames the file to <file>.deleted.<time> instead of deleting it", async () => {
    await transcripts.append("s1", user("a"));
    const before = await readFile(transcripts.location("s1"), "utf8");
    const archived = await transcripts.remove("s1");
    expect(archived).toBe("s1.jsonl.deleted.2026-01-02T03-04-05-678Z");
    expect(await readFile(transcripts.location(archived!), "utf8")).toBe(before);
    expect(await transcripts.readTail("s1", { limit: 5 })).toEqual({ messages: [], hasMore: false });
  });

  it("never overwrites an earlier archive with the same time", async () => {
    await transcripts.append("s1", user("a"));
    await transcripts.remove("s1", { now: NOW });
    await transcripts.append("s1", user("b"));
    expect(await transcripts.remove("s1", { now: NOW })).toBe("s1.jsonl.deleted.2026-01-02T03-04-05-678Z-1");
    expect((await readdir(dir)).sort()).toEqual([
      "s1.jsonl.deleted.2026-01-02T03-04-05-678Z",
      "s1.jsonl.deleted.2026-01-02T03-04-05-678Z-1",
    ]);
  });

  it("returns undefined for a missing file", async () => {
    expect(await transcripts.remove("nobody")).toBeUndefined();
  });
});

describe("createTranscripts crash safety", () => {
  it("keeps every acknowledged append exactly once, and a readable file, across 20 SIGKILLs", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-transcript-crash-"));
    const logger = createMemoryLogger();
    const transcripts = createTranscripts({ dir, logger });
    let start = 0;
    const acked: number[] = [];
    for (let round = 0; round < 20; round++) {
      acked.push(
        ...(await runAndKill("transcript-writer.ts", [dir, String(start)], 5 + Math.floor(Math.random() * 60))),
      );
      start += 1_000_000;
    }
    // A kill can tear at most the line being written; readers skip such a line, and the next append starts a new one.
    const lines = (await readFile(path.join(dir, "s1.jsonl"), "utf8")).split("\n").filter(Boolean);
    const torn = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(torn.length).toBeLessThanOrEqual(20);
    const { messages } = await transcripts.readTail("s1", { limit: 1_000_000 });
    const seen = new Map<string, number>();
    for (const message of messages) seen.set(message.runId!, (seen.get(message.runId!) ?? 0) + 1);
    for (const i of acked) expect(seen.get(`r${i}`), `ack ${i}`).toBe(1);
    expect(acked.length).toBeGreaterThan(0);
  }, 120_000);
});

describe("createTranscripts preview", () => {
  it("gives the same newest messages as readTail, kept up to date by appends without reading the file again", async () => {
    for (const text of ["a", "b", "c"]) await transcripts.append("s1", user(text));
    expect(await transcripts.preview("s1", 3)).toEqual((await transcripts.readTail("s1", { limit: 3 })).messages);
    // Once warm, appends update it: a change behind our back (here, the file emptied) goes unseen until it is cold again.
    await transcripts.append("s1", { role: "toolResult", content: "tool output" });
    await transcripts.append("s1", { role: "assistant", content: "d" });
    expect(texts(await transcripts.preview("s1", 2))).toEqual(["c", "d"]);
    expect(await transcripts.preview("s1", 3)).toEqual((await transcripts.readTail("s1", { limit: 3 })).messages);
    await writeFile(path.join(dir, "s1.jsonl"), "");
    expect(texts(await transcripts.preview("s1", 2))).toEqual(["c", "d"]);
  });

  it("reads a file again after it was set aside, and reads the file for more messages than a preview keeps", async () => {
    for (let i = 0; i < 8; i++) await transcripts.append("s2", user(`m${i}`));
    expect(texts(await transcripts.preview("s2", 7))).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    await transcripts.preview("s2", 1);
    await transcripts.remove("s2");
    expect(await transcripts.preview("s2", 3)).toEqual([]);
    await transcripts.append("s2", user("fresh"));
    expect(texts(await transcripts.preview("s2", 3))).toEqual(["fresh"]);
  });
});

describe("createTranscripts recent", () => {
  const mix = (i: number): TranscriptMessageInput[] => [
    user(`q${i}`),
    { role: "toolCall", content: [{ type: "toolCall", id: `c${i}`, name: "weather", arguments: { day: i } }] },
    { role: "toolResult", content: [{ type: "toolResult", toolCallId: `c${i}`, content: `sunny ${i}` }] },
    { role: "assistant", content: [{ type: "text", text: `a${i}` }], usage: { input: 3, output: 4 }, ...{ extra: i } },
    { role: "user", content: "/status", command: true },
  ];
  const sameAsReadTail = async (ref: string, limit: number) =>
    expect(await transcripts.recent(ref, limit)).toEqual(
      (await transcripts.readTail(ref, { limit, includeTools: true })).messages,
    );

  it("gives exactly what readTail gives with tool messages, cold and then kept up to date by appends", async () => {
    for (let i = 0; i < 3; i++) for (const message of mix(i)) await transcripts.append("s1", message);
    await sameAsReadTail("s1", 200); // cold: read from the file
    await transcripts.append("s1", { role: "system", content: "[compaction] what was said so far" });
    for (let i = 3; i < 50; i++) for (const message of mix(i)) await transcripts.append("s1", message);
    for (const limit of [1, 7, 200]) await sameAsReadTail("s1", limit);
    // Past what it keeps, the oldest message drops off, as it does from readTail's page.
    expect((await transcripts.recent("s1", 200))[0]).toMatchObject({ role: "user", content: "q10" });
    await sameAsReadTail("s1", 201);
  });

  it("answers a warm file from memory without reading it", async () => {
    await transcripts.append("s1", user("a"));
    expect(texts(await transcripts.recent("s1", 5))).toEqual(["a"]);
    await transcripts.append("s1", { role: "assistant", content: "b" });
    // Emptied behind the gateway's back: a warm history does not read the file, so it does not notice.
    await writeFile(transcripts.location("s1"), "");
    expect(texts(await transcripts.recent("s1", 5))).toEqual(["a", "b"]);
  });

  it("knows a transcript it began without reading it back", async () => {
    await transcripts.append("s1", user("a"));
    // Emptied behind the gateway's back: the history of a file this process began is already known,
    await writeFile(transcripts.location("s1"), "");
    expect(texts(await transcripts.recent("s1", 5))).toEqual(["a"]);
    // while another process, which did not begin it, reads the file.
    const other = createTranscripts({ dir, logger, now: () => NOW });
    expect(await other.recent("s1", 5)).toEqual([]);
    await other.close();
  });

  it("starts again from the new file after the transcript was set aside", async () => {
    for (const message of mix(0)) await transcripts.append("s1", message);
    await transcripts.recent("s1", 200);
    await transcripts.remove("s1");
    expect(await transcripts.recent("s1", 200)).toEqual([]);
    await transcripts.append("s1", user("fresh"));
    await sameAsReadTail("s1", 200);
    expect(texts(await transcripts.recent("s1", 200))).toEqual(["fresh"]);
  });

  it("hands out copies: changing a returned page changes nothing kept", async () => {
    await transcripts.append("s1", user("a"));
    const page = await transcripts.recent("s1", 5);
    page.push(page[0]!);
    expect(texts(await transcripts.recent("s1", 5))).toEqual(["a"]);
  });

  it("refuses a limit below 1 as readTail does", async () => {
    await expect(transcripts.recent("s1", 0)).rejects.toThrow(invalidArgument);
  });
});
