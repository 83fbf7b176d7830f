import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createInboundDedupe, inboundDedupeKey } from "../../src/inbound/inbound-dedupe.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createManualClock } from "../fakes/manual-clock.js";

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-dedupe-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, "state", "inbound-dedupe.json");
}

describe("createInboundDedupe", () => {
  it("claims a key the first time and refuses it after that", async () => {
    const dedupe = await createInboundDedupe({ path: await tempFile(), logger: createMemoryLogger() });
    expect(await dedupe.claim("telegram:default:42:1")).toBe(true);
    expect(await dedupe.claim("telegram:default:42:1")).toBe(false);
    expect(await dedupe.claim("telegram:default:42:2")).toBe(true);
  });

  it("lets one of two concurrent claims of a key win", async () => {
    const dedupe = await createInboundDedupe({ path: await tempFile(), logger: createMemoryLogger() });
    const results = await Promise.all([dedupe.claim("k"), dedupe.claim("k")]);
    expect(results.sort()).toEqual([false, true]);
  });

  it("remembers claimed keys after the file is opened again", async () => {
    const file = await tempFile();
    const first = await createInboundDedupe({ path: file, logger: createMemoryLogger() });
    await first.claim("telegram:default:42:1");
    const reopened = await createInboundDedupe({ path: file, logger: createMemoryLogger() });
    expect(await reopened.claim("telegram:default:42:1")).toBe(false);
    expect(await reopened.claim("telegram:default:42:2")).toBe(true);
  });

  it("forgets keys older than retentionMs when compacted", async () => {
    const file = await tempFile();
    const clock = createManualClock();
    const dedupe = await createInboundDedupe({ path: file, logger: createMemoryLogger(), now: clock.now, retentionMs: 1_000 });
    await dedupe.claim("old");
    clock.advance(800);
    await dedupe.claim("recent");
    clock.advance(800);
    await dedupe.compact();
    expect(Object.keys(JSON.parse(await readFile(file, "utf8")))).toEqual(["recent"]);
    expect(await dedupe.claim("old")).toBe(true);
    expect(await dedupe.claim("recent")).toBe(false);
  });

  // BUG (reported): nothing in src calls compact(), so expired keys stay until the file holds
  // maxKeys (50,000) keys; each claim then rewrites a 2.5 MB file (about 100 ms per message).
  it("BUG: forgets keys older than retentionMs without an explicit compact", async () => {
    const file = await tempFile();
    const clock = createManualClock();
    const dedupe = await createInboundDedupe({ path: file, logger: createMemoryLogger(), now: clock.now, retentionMs: 1_000 });
    await dedupe.claim("old");
    clock.advance(2_000);
    await dedupe.claim("new");
    expect(Object.keys(JSON.parse(await readFile(file, "utf8")))).toEqual(["new"]);
  });

  it("keeps at most maxKeys keys, dropping the oldest first", async () => {
    const clock = createManualClock();
    const dedupe = await createInboundDedupe({ path: await tempFile(), logger: createMemoryLogger(), now: clock.now, maxKeys: 2 });
    for (const key of ["a", "b", "c"]) {
      await dedupe.claim(key);
      clock.advance(1);
    }
    expect(await dedupe.claim("b")).toBe(false);
    expect(await dedupe.claim("c")).toBe(false);
    expect(await dedupe.claim("a")).toBe(true);
  });

  it("moves a corrupt file aside, logs it and starts empty", async () => {
    const file = await tempFile();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "{ not json");
    const logger = createMemoryLogger();
    const dedupe = await createInboundDedupe({ path: file, logger });
    expect(await dedupe.claim("k")).toBe(true);
    const moved = (await readdir(path.dirname(file))).filter((name) => name.startsWith("inbound-dedupe.json.corrupt-"));
    expect(moved).toHaveLength(1);
    expect(await readFile(path.join(path.dirname(file), moved[0]!), "utf8")).toBe("{ not json");
    expect(logger.records).toContainEqual(expect.objectContaining({ level: "error", fields: expect.objectContaining({ file }) }));
  });
});

describe("inboundDedupeKey", () => {
  it("joins channel, account, chat and message id", () => {
    const message = InboundMessageSchema.parse({ channel: "Telegram", chat: { type: "group", id: -100123 }, sender: { id: 7 }, messageId: 55 });
    expect(inboundDedupeKey(message)).toBe("telegram:default:-100123:55");
  });

  it("keeps accounts apart", () => {
    const message = InboundMessageSchema.parse({ channel: "discord", accountId: "work", chat: { type: "channel", id: "c1" }, sender: { id: "u1" }, messageId: "m1" });
    expect(inboundDedupeKey(message)).toBe("discord:work:c1:m1");
  });

  it("is undefined for a message without a message id", () => {
    const message = InboundMessageSchema.parse({ channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" } });
    expect(inboundDedupeKey(message)).toBeUndefined();
  });
});
