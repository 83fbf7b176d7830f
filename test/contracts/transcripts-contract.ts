// The contract every implementation of the transcripts port (src/sessions/transcripts/transcripts-port.ts)
// runs: appends in call order, exact paging back to the first message, tool messages hidden unless
// asked for, the header an append creates, archive on reset (the archive kept, the id starting
// afresh), purge, listing, clear errors for bad ids, limits, cursors and messages, and everything
// there again after a close and a reopen.
// Local files run it in test/sessions/transcripts/local-transcripts.contract.test.ts, memory in
// memory-transcripts.contract.test.ts, PostgreSQL in test/state/postgres-transcripts.contract.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCodes } from "../../src/errors.js";
import type { Transcripts, TranscriptMessageInput } from "../../src/sessions/transcripts/index.js";
import { transcriptId } from "../../src/sessions/transcripts/transcript-path.js";

/** An implementation of the transcripts port, as the contract needs it. */
export interface TranscriptsContractSubject {
  /** names the implementation in the suite's title ("local files") */
  name: string;
  /**
   * Opens the transcripts kept for `dir` (an empty temporary folder made for one test; opened again
   * after `close` to reopen the same ones) with clock `now`. Another backend maps `dir` to its own
   * place; memory hands out the same instance again.
   */
  open(dir: string, now: () => number): Promise<Transcripts>;
}

const NOW = Date.parse("2026-01-02T03:04:05.678Z");
const user = (content: string): TranscriptMessageInput => ({ role: "user", content });
const tool = (id: string): TranscriptMessageInput => ({
  role: "toolCall",
  content: [{ type: "toolCall", id, name: "read", arguments: {} }],
});
const invalidArgument = expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT });

/** Runs the transcripts contract on `subject`. */
export function runTranscriptsContract(subject: TranscriptsContractSubject): void {
  async function fresh(now: () => number = () => NOW): Promise<{ t: Transcripts; dir: string }> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-transcripts-contract-"));
    const t = await subject.open(dir, now);
    onTestFinished(async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    });
    return { t, dir };
  }
  const contents = (messages: { content: unknown }[]) => messages.map((m) => m.content);

  describe(`transcripts contract: ${subject.name}`, () => {
    it("keeps 200 concurrent appends whole, in call order, with the clock's timestamp", async () => {
      const { t } = await fresh();
      await Promise.all(Array.from({ length: 200 }, (_, i) => t.append("s1", user(`m${i}`))));
      const { messages, hasMore } = await t.readTail("s1", { limit: 1000 });
      expect(contents(messages)).toEqual(Array.from({ length: 200 }, (_, i) => `m${i}`));
      expect(messages[0]).toEqual({ role: "user", content: "m0", timestamp: NOW });
      expect(hasMore).toBe(false);
    });

    it("pages back to the first message exactly once, hasMore exact, tools hidden unless asked", async () => {
      const { t } = await fresh();
      for (let i = 0; i < 25; i++) {
        await t.append("s1", user(`m${i}`));
        if (i % 5 === 0) await t.append("s1", tool(`c${i}`));
      }
      const seen: unknown[] = [];
      let page = await t.readTail("s1", { limit: 10 });
      for (;;) {
        seen.unshift(...contents(page.messages));
        if (!page.hasMore) break;
        expect(page.cursor).toEqual(expect.any(String));
        page = await t.readTail("s1", { limit: 10, cursor: page.cursor! });
      }
      expect(page.cursor).toBeUndefined();
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`));
      expect((await t.readTail("s1", { limit: 25 })).hasMore).toBe(false);
      const withTools = await t.readTail("s1", { limit: 2, includeTools: true });
      expect(withTools.messages.map((m) => m.role)).toEqual(["user", "user"]);
      expect((await t.readTail("s1", { limit: 1000, includeTools: true })).messages).toHaveLength(30);
    });

    it("gives recent and preview exactly what readTail gives, also right after an append", async () => {
      const { t } = await fresh();
      for (let i = 0; i < 8; i++) await t.append("s1", i % 2 ? tool(`c${i}`) : user(`m${i}`));
      expect(await t.recent("s1", 5)).toEqual((await t.readTail("s1", { limit: 5, includeTools: true })).messages);
      expect(await t.preview("s1", 3)).toEqual((await t.readTail("s1", { limit: 3 })).messages);
      await t.append("s1", user("last"));
      expect((await t.recent("s1", 1))[0]?.content).toBe("last");
      expect((await t.preview("s1", 1))[0]?.content).toBe("last");
    });

    it("reads a forgotten transcript from storage: what another holder appended meanwhile is in recent and preview", async () => {
      const { t, dir } = await fresh();
      await t.append("s1", user("a"));
      expect(contents(await t.recent("s1", 5))).toEqual(["a"]);
      expect(contents(await t.preview("s1", 5))).toEqual(["a"]);
      const next = await subject.open(dir, () => NOW); // the session's next holder, on the same storage
      onTestFinished(() => next.close());
      await next.append("s1", user("b"));
      t.forget("s1");
      expect(contents(await t.recent("s1", 5))).toEqual(["a", "b"]);
      expect(contents(await t.preview("s1", 5))).toEqual(["a", "b"]);
    });

    it("reads a missing transcript as empty, and refuses bad limits and cursors clearly", async () => {
      const { t } = await fresh();
      expect(await t.readTail("nobody", { limit: 5 })).toEqual({ messages: [], hasMore: false });
      expect(await t.readHeader("nobody")).toBeUndefined();
      expect(await t.stat("nobody")).toBeUndefined();
      for (const limit of [0, -1, 1.5]) await expect(t.readTail("s1", { limit })).rejects.toThrow(invalidArgument);
      await expect(t.readTail("s1", { limit: 5, cursor: "not a cursor!" })).rejects.toThrow(/Invalid history cursor/);
    });

    it("refuses ids that are no transcript id, and a malformed message, writing nothing", async () => {
      const { t } = await fresh();
      for (const id of ["../x", "a/b", "", "s1.jsonl"])
        await expect(t.append(id, user("x"))).rejects.toThrow(invalidArgument);
      await expect(t.append("s1", { role: "nobody" } as never)).rejects.toThrow(/Invalid transcript message/);
      expect(await t.list()).toEqual([]);
    });

    it("creates the header from the id or the options", async () => {
      const { t } = await fresh();
      const topic = transcriptId("s1", "abc/def");
      await t.append(topic, user("a"));
      await t.append("child", user("a"), { sessionId: "other", cwd: "/w", parentSession: "parent" });
      expect(await t.readHeader(topic)).toMatchObject({
        type: "session",
        id: "s1",
        timestamp: "2026-01-02T03:04:05.678Z",
      });
      expect(await t.readHeader("child")).toMatchObject({ id: "other", cwd: "/w", parentSession: "parent" });
    });

    it("archives on remove: the archive kept and listed, the id starting afresh, old cursors refused", async () => {
      let now = NOW;
      const { t } = await fresh(() => now);
      for (let i = 0; i < 30; i++) await t.append("s1", user(`old${i}`));
      const { cursor } = await t.readTail("s1", { limit: 2 });
      const archive = await t.remove("s1");
      expect(archive).toEqual(expect.any(String));
      expect(await t.remove("s1")).toBeUndefined();
      now += 1000;
      await t.append("s1", user("new"));
      expect(contents((await t.readTail("s1", { limit: 10 })).messages)).toEqual(["new"]);
      await expect(t.readTail("s1", { limit: 2, cursor: cursor! })).rejects.toThrow(/Invalid history cursor/);
      const listed = await t.list();
      expect(listed.find((l) => l.id === archive)).toMatchObject({ archivedAt: NOW });
      expect(listed.find((l) => l.id === "s1")).toMatchObject({ updatedAt: expect.any(Number) });
      expect(listed.find((l) => l.id === "s1")?.archivedAt).toBeUndefined();
      expect((await t.stat("s1"))?.bytes).toBeGreaterThan(0);
      expect(t.location(archive!)).toEqual(expect.any(String));
    });

    it("reads an archive by the name remove gave, header and every message (state migrate copies archives)", async () => {
      const { t } = await fresh();
      for (let i = 0; i < 5; i++) await t.append("s1", user(`old${i}`), { sessionId: "s1", cwd: "/w" });
      const archive = (await t.remove("s1"))!;
      await t.append("s1", user("new"));
      expect(contents((await t.readTail(archive, { limit: 3 })).messages)).toEqual(["old2", "old3", "old4"]);
      expect((await t.readTail(archive, { limit: 3 })).hasMore).toBe(true);
      expect(await t.readHeader(archive)).toMatchObject({ id: "s1", cwd: "/w" });
      expect(contents((await t.readTail("s1", { limit: 10 })).messages)).toEqual(["new"]);
    });

    it("never overwrites an earlier archive archived at the same time", async () => {
      const { t } = await fresh();
      await t.append("s1", user("a"));
      const first = await t.remove("s1");
      await t.append("s1", user("b"));
      const second = await t.remove("s1");
      expect(second).not.toBe(first);
      expect((await t.list()).filter((l) => l.archivedAt !== undefined)).toHaveLength(2);
    });

    it("purges a transcript or an archive for good, false when missing", async () => {
      const { t } = await fresh();
      await t.append("s1", user("a"));
      await t.append("s2", user("b"));
      const archive = (await t.remove("s1"))!;
      expect(await t.purge(archive)).toBe(true);
      expect(await t.purge("s2")).toBe(true);
      expect(await t.purge("s2")).toBe(false);
      expect(await t.list()).toEqual([]);
      await t.append("s2", user("again"));
      expect(contents((await t.readTail("s2", { limit: 5 })).messages)).toEqual(["again"]);
    });

    it("has every acknowledged append and archive after a reopen", async () => {
      const { t, dir } = await fresh();
      for (let i = 0; i < 20; i++) await t.append("s1", user(`m${i}`));
      await t.append("s2", user("x"));
      const archive = await t.remove("s2");
      await t.close();
      const again = await subject.open(dir, () => NOW);
      onTestFinished(() => again.close());
      expect(contents((await again.readTail("s1", { limit: 100 })).messages)).toHaveLength(20);
      expect((await again.list()).map((l) => l.id).sort()).toEqual([archive, "s1"].sort());
      await again.append("s1", user("after"));
      expect((await again.recent("s1", 1))[0]?.content).toBe("after");
    });
  });
}
