// The outbox's own tests are about what it keeps on disk (a reopen, a corrupt file, rows of an older
// shape): they stay on the local port; the delivery gate's tests run it on the in-memory port.
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { readStateFile } from "../support/read-state-file.js";
import { onLocalState } from "../support/local-state.js";

async function tempFile(content?: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-outbox-"));
  const file = path.join(dir, "state", "outbox.json");
  if (content !== undefined) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return { dir: path.dirname(file), file };
}

const message = (id: string, sessionKey = "agent:main:telegram:dm:42") => ({
  id,
  sessionKey,
  target: { channel: "telegram", to: "42" },
  kind: "reply" as const,
  chunks: ["hello"],
});

describe("createOutbox", () => {
  it("persists items and reads them back in a new outbox on the same file", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    const { item, created } = await outbox.enqueue({ ...message("a"), replyToMessageId: "7" });
    expect(created).toBe(true);
    expect(item).toMatchObject({ id: "a", seq: 0, status: "pending", sent: 0, attempts: 0, replyToMessageId: "7" });
    await outbox.update("a", { sent: 1, messageIds: ["m1"] });
    const reopened = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    expect(reopened.get("a")).toMatchObject({ sent: 1, messageIds: ["m1"], status: "pending" });
    expect((await reopened.enqueue(message("b"))).item.seq).toBe(1);
  });

  it("returns the existing item for an id it already holds", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    await outbox.enqueue(message("same"));
    const again = await outbox.enqueue({ ...message("same"), chunks: ["different"] });
    expect(again.created).toBe(false);
    expect(again.item.chunks).toEqual(["hello"]);
    expect(outbox.pending()).toHaveLength(1);
  });

  it("moves a corrupt file aside, logs it and starts empty", async () => {
    const { dir, file } = await tempFile("{ not json");
    const logger = createMemoryLogger();
    const clock = createManualClock(Date.UTC(2025, 0, 2, 3, 4, 5, 6));
    const deps = onLocalState({ path: file, logger, now: clock.now });
    const outbox = await createOutbox(deps);
    expect(outbox.report.corruptMovedTo).toBe(`${file}.corrupt-2025-01-02T03-04-05-006Z`);
    expect(await readFile(outbox.report.corruptMovedTo!, "utf8")).toBe("{ not json");
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "error", message: "outbox is corrupt; moved aside, starting empty" }),
    );
    expect(outbox.pending()).toEqual([]);
    await outbox.enqueue(message("a"));
    await outbox.close();
    await deps.state.close();
    expect((await readdir(dir)).sort()).toEqual([
      "outbox.json",
      "outbox.json.corrupt-2025-01-02T03-04-05-006Z",
      "outbox.json.meta",
    ]);
  });

  it("skips an invalid row but keeps it in the file", async () => {
    const { file } = await tempFile(JSON.stringify({ broken: { id: "broken", status: "sideways" } }));
    const logger = createMemoryLogger();
    const outbox = await createOutbox(onLocalState({ path: file, logger }));
    await outbox.enqueue(message("a"));
    expect(outbox.get("broken")).toBeUndefined();
    expect(JSON.parse(await readFile(file, "utf8")).broken).toEqual({ id: "broken", status: "sideways" });
    expect(logger.records.some((r) => r.level === "warn" && r.fields.id === "broken")).toBe(true);
  });

  it("keeps pending items and prunes finished ones past the count or age limit", async () => {
    const { file } = await tempFile();
    const clock = createManualClock();
    const outbox = await createOutbox(
      onLocalState({
        path: file,
        logger: createMemoryLogger(),
        now: clock.now,
        retention: { maxItems: 2, maxAgeMs: 60_000 },
      }),
    );
    for (const id of ["p", "d1", "d2", "d3"]) await outbox.enqueue(message(id));
    for (const id of ["d1", "d2", "d3"]) {
      clock.advance(1000);
      await outbox.update(id, { status: "delivered", deliveredAt: clock.now() });
    }
    expect(outbox.get("d1")).toBeUndefined();
    expect(outbox.get("d3")?.status).toBe("delivered");
    clock.advance(120_000);
    const reopened = await createOutbox(
      onLocalState({
        path: file,
        logger: createMemoryLogger(),
        now: clock.now,
        retention: { maxAgeMs: 60_000 },
      }),
    );
    expect(reopened.get("d3")).toBeUndefined();
    expect(reopened.get("p")?.status).toBe("pending");
    expect(Object.keys(await readStateFile(file))).toEqual(["p"]);
  });

  it("lists failures newest first, optionally of one session", async () => {
    const { file } = await tempFile();
    const clock = createManualClock();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger(), now: clock.now }));
    await outbox.enqueue(message("a", "agent:main:main"));
    await outbox.enqueue(message("b", "agent:main:cron:job-1"));
    await outbox.update("a", { status: "failed", lastError: { reason: "blocked", message: "bot was blocked" } });
    clock.advance(10);
    await outbox.update("b", { status: "failed", lastError: { reason: "chat_not_found", message: "chat not found" } });
    expect(outbox.failures().map((i) => i.id)).toEqual(["b", "a"]);
    expect(outbox.failures("agent:main:main").map((i) => i.lastError?.reason)).toEqual(["blocked"]);
  });

  it("gives a chunk to exactly one of many concurrent claimers, and the next chunk only once the first is recorded", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    await outbox.enqueue({ ...message("a"), chunks: ["one", "two"] });
    const claims = await Promise.all(Array.from({ length: 50 }, () => outbox.claim("a", 0, 5)));
    expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    expect(claims.find((c) => c !== undefined)).toMatchObject({ id: "a", sending: { index: 0, at: 5 } });
    expect(await outbox.claim("a", 1, 6)).toBeUndefined(); // chunk 0 is not recorded yet
    await outbox.update("a", { sent: 1, sending: undefined, messageIds: ["m1"] });
    expect(await outbox.claim("a", 0, 7)).toBeUndefined(); // recorded: never sent again
    expect(await outbox.claim("a", 1, 7)).toMatchObject({ sending: { index: 1, at: 7 } });
    expect((await readStateFile(file)).a).toMatchObject({ sent: 1, sending: { index: 1, at: 7 } });
  });

  it("lets a claim read back after a restart be claimed again (the send it marked was interrupted)", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    await outbox.enqueue(message("a"));
    expect(await outbox.claim("a", 0, 1)).toBeDefined();
    expect(await outbox.claim("a", 0, 2)).toBeUndefined();
    const reopened = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    expect(reopened.get("a")?.sending).toEqual({ index: 0, at: 1 });
    expect(await reopened.claim("a", 0, 3)).toMatchObject({ sending: { index: 0, at: 3 } });
    expect(await reopened.claim("a", 0, 4)).toBeUndefined();
  });

  it("claims nothing of an item that is finished or unknown", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    await outbox.enqueue(message("a"));
    await outbox.update("a", { status: "failed", lastError: { reason: "blocked", message: "bot was blocked" } });
    expect(await outbox.claim("a", 0, 1)).toBeUndefined();
    expect(await outbox.claim("nope", 0, 1)).toBeUndefined();
    expect(outbox.get("a")).not.toHaveProperty("sending");
  });

  it("refuses to update an item it does not hold", async () => {
    const { file } = await tempFile();
    const outbox = await createOutbox(onLocalState({ path: file, logger: createMemoryLogger() }));
    await expect(outbox.update("nope", { sent: 1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
