import http from "node:http";
import { readdir, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Api } from "grammy";
import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { offsetFilePath } from "../../../adapters/telegram/index.js";
import type { OffsetStore } from "../../../adapters/telegram/offset-store.js";
import { pollUpdates } from "../../../adapters/telegram/poll-updates.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { TEST_BOT, startFakeTelegramServer } from "../../fakes/fake-telegram-server.js";
import { type TelegramHarness, dm, pollTexts, useTelegramHarness } from "./telegram-harness.js";

type Harness = TelegramHarness;
const harness = useTelegramHarness();

const texts = (h: Harness) => h.received.map((m) => m.text);
/** The account's offset row in the channel state the adapter was started with. */
const storedOffset = (h: Harness) =>
  h.context.state.rows("default").get("offset") as { version: number; botId: number; lastUpdateId: number } | undefined;

describe("pollUpdates", () => {
  it("hands updates on in order and records the last one handled", async () => {
    const h = await harness();
    h.fake.push(dm("one", 1));
    h.fake.push(dm("two", 2));
    await expect.poll(() => texts(h)).toEqual(["one", "two"]);
    await expect.poll(() => storedOffset(h)).toEqual({ version: 1, botId: TEST_BOT.info.id, lastUpdateId: 2 });
    // The offset is a row of the channel state: nothing is written in the home.
    await expect(readdir(path.join(h.home, "channels"))).rejects.toThrow(/ENOENT/);
    expect(h.fake.callsTo("deleteWebhook").length).toBe(1);
    expect(h.fake.calls.findIndex((c) => c.method === "deleteWebhook")).toBeLessThan(
      h.fake.calls.findIndex((c) => c.method === "getUpdates"),
    );
  });

  it("resumes after the recorded update when restarted, even if Telegram still holds older ones", async () => {
    const first = await harness({ forgetConfirmed: false });
    first.fake.push(dm("before restart", 1));
    await expect.poll(() => texts(first)).toEqual(["before restart"]);
    await expect.poll(() => storedOffset(first)?.lastUpdateId).toBe(1);
    await first.adapter.stop();
    first.fake.push(dm("after restart", 2));
    first.received.length = 0;
    const polledBefore = first.fake.callsTo("getUpdates").length;
    await first.start();
    await expect.poll(() => texts(first)).toEqual(["after restart"]);
    expect(first.fake.callsTo("getUpdates")[polledBefore]!.body.offset).toBe(2);
  });

  it("does not move the offset past an update the core could not store, and hands it over again", async () => {
    let refusals = 1;
    const h = await harness({
      beforeReceive: async () => {
        if (refusals-- > 0) throw new Error("disk full");
      },
    });
    h.fake.push(dm("keep me", 1));
    await expect.poll(() => texts(h), { timeout: 5_000 }).toEqual(["keep me"]);
    const polls = h.fake.callsTo("getUpdates");
    // The poll after the refusal still asked from the start: Telegram kept the update.
    expect(polls.filter((c) => c.body.offset === undefined).length).toBeGreaterThanOrEqual(2);
    await expect.poll(() => storedOffset(h)?.lastUpdateId).toBe(1);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: "telegram update not stored; fetching it again" }),
    );
  });

  it("hands a whole batch to the sink in update order before the first is stored, and confirms it once all are stored", async () => {
    const handedOn: string[] = [];
    const stored: Array<() => void> = [];
    const h = await harness({
      start: false,
      beforeReceive: (message) => {
        handedOn.push(message.text);
        return new Promise<void>((resolve) => stored.push(resolve));
      },
    });
    for (const [i, text] of ["one", "two", "three"].entries()) h.fake.push(dm(text, i + 1));
    await h.start();
    await expect.poll(() => handedOn).toEqual(["one", "two", "three"]);
    for (const resolve of stored) resolve();
    await expect.poll(() => h.fake.callsTo("getUpdates").at(-1)?.body.offset).toBe(4);
  });

  it("imports an earlier version's offset file once, resumes after it and keeps the file as .imported", async () => {
    const h = await harness({ start: false });
    const file = offsetFilePath(h.home, "default");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 1, botId: TEST_BOT.info.id, lastUpdateId: 7 }));
    await h.start();
    await h.fake.waitFor("getUpdates");
    expect(h.fake.callsTo("getUpdates")[0]!.body.offset).toBe(8);
    expect(storedOffset(h)).toEqual({ version: 1, botId: TEST_BOT.info.id, lastUpdateId: 7 });
    expect(await readdir(path.dirname(file))).toEqual(["offset.json.imported"]);
  });

  it("starts without an offset when the imported file belongs to another bot", async () => {
    const h = await harness({ start: false });
    const file = offsetFilePath(h.home, "default");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 1, botId: 999, lastUpdateId: 50 }));
    await h.start();
    await h.fake.waitFor("getUpdates");
    expect(h.fake.callsTo("getUpdates")[0]!.body).not.toHaveProperty("offset");
  });

  it("moves a corrupt offset file aside, reports it, and polls on", async () => {
    const h = await harness({ start: false });
    const file = offsetFilePath(h.home, "default");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "{oops");
    await h.start();
    h.fake.push(dm("still here", 1));
    await expect.poll(() => texts(h)).toEqual(["still here"]);
    expect((await readdir(path.dirname(file))).some((name) => name.startsWith("offset.json.corrupt-"))).toBe(true);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "error", message: "telegram offset file is corrupt; moved aside" }),
    );
  });

  it("backs off after a network error its retry at once meets too, and polls on, logging no token", async () => {
    const h = await harness({ start: false });
    h.fake.failNext("getUpdates", "disconnect", 2);
    await h.start();
    h.fake.push(dm("after the hiccup", 1));
    await expect.poll(() => texts(h)).toEqual(["after the hiccup"]);
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: "telegram getUpdates failed" }),
    );
    expect(JSON.stringify(h.logger.records)).not.toContain(TEST_BOT.token);
  });

  it("retries at once, without backing off or warning, when a poll meets a closed connection (a stale keep-alive socket)", async () => {
    const h = await harness({ start: false });
    const logger = createMemoryLogger();
    const handled: string[] = [];
    const controller = new AbortController();
    h.fake.push(dm("before", 1));
    // A backoff would outlast the test: only a retry at once gets the second update through.
    const backoff = { minMs: 600_000, maxMs: 600_000 };
    const polling = pollTexts(h.fake.apiRoot, { backoff, logger, signal: controller.signal, handled });
    await expect.poll(() => handled).toEqual(["before"]);
    h.fake.failNext("getUpdates", "disconnect");
    h.fake.push(dm("after", 2));
    await expect.poll(() => handled).toEqual(["before", "after"]);
    controller.abort();
    await polling;
    expect(logger.records.filter((r) => r.level === "warn")).toEqual([]);
  });

  it("polls on, not stops, when its first poll meets another poller's open poll (409: a paused ex-holder's stale poll)", async () => {
    const fake = await startFakeTelegramServer({ maxHoldMs: 60_000 });
    try {
      // The stale poll: open on its own connection, as a paused process leaves it.
      const stale = http.request(`${fake.apiRoot}/bot${TEST_BOT.token}/getUpdates`, { method: "POST", agent: false });
      stale.on("error", () => undefined);
      stale.end(JSON.stringify({ timeout: 60 }));
      await fake.waitFor("getUpdates");
      const logger = createMemoryLogger();
      const handled: string[] = [];
      const controller = new AbortController();
      const backoff = { minMs: 50, maxMs: 50 };
      const polling = pollTexts(fake.apiRoot, { backoff, logger, signal: controller.signal, handled });
      await expect.poll(() => fake.conflicts()).toBeGreaterThanOrEqual(1);
      stale.destroy(); // the ex-holder's poll ends (its process went away, or Telegram answered it)
      fake.push(dm("for the new holder", 1));
      await expect.poll(() => handled).toEqual(["for the new holder"]);
      controller.abort();
      await polling;
      expect(logger.records).toContainEqual(
        expect.objectContaining({
          level: "warn",
          message: "telegram getUpdates failed",
          fields: expect.objectContaining({ hint: "another process polls this bot, or a webhook is set" }),
        }),
      );
    } finally {
      await fake.close();
    }
  });

  it("stops polling when Telegram rejects the token", async () => {
    const h = await harness({ start: false });
    h.fake.failNext("getUpdates", { error_code: 401, description: "Unauthorized" });
    const logger = createMemoryLogger();
    // The loop returning, with its signal never aborted, is polling stopped for good.
    const backoff = { minMs: 1, maxMs: 1 };
    await pollTexts(h.fake.apiRoot, { backoff, logger, signal: new AbortController().signal, handled: [] });
    expect(logger.records.map((r) => r.message)).toContain("telegram rejected the bot token; polling stopped");
    expect(h.fake.callsTo("getUpdates")).toHaveLength(1);
  });

  it("hands a batch on in ascending update_id order and skips what it already handled", async () => {
    const batches: Update[][] = [
      [3, 2, 1].map((id) => ({ update_id: id }) as Update),
      [{ update_id: 2 } as Update, { update_id: 4 } as Update],
    ];
    const handled: number[] = [];
    const run = await pollScripted(batches, async (u) => void handled.push(u.update_id));
    expect(handled).toEqual([1, 2, 3, 4]);
    // One offset write per batch, once all of it is stored.
    expect(run.written).toEqual([3, 4]);
  });

  it("hands every update of a batch on before waiting for the first to be stored", async () => {
    const batches: Update[][] = [[1, 2, 3].map((id) => ({ update_id: id }) as Update)];
    const started: number[] = [];
    const stored: Array<() => void> = [];
    const run = pollScripted(batches, (u) => {
      started.push(u.update_id);
      return new Promise<void>((resolve) => stored.push(resolve));
    });
    await expect.poll(() => started).toEqual([1, 2, 3]);
    for (const resolve of stored) resolve();
    expect((await run).written).toEqual([3]);
  });

  it("moves the offset only past the stored part of a batch, and asks again from the first update not stored", async () => {
    const batches: Update[][] = [[1, 2, 3].map((id) => ({ update_id: id }) as Update)];
    const run = await pollScripted(batches, async (u) => {
      if (u.update_id === 2) throw new Error("disk full");
    });
    expect(run.written).toEqual([1]);
    expect(run.offsetsAsked).toEqual([undefined, 2]);
  });
});

/**
 * Polls a scripted API that answers `batches` one by one, then stops polling; returns the offsets
 * written and the offset each getUpdates asked from.
 */
async function pollScripted(
  batches: Update[][],
  handle: (update: Update) => Promise<void>,
): Promise<{ written: number[]; offsetsAsked: Array<number | undefined> }> {
  const controller = new AbortController();
  const offsetsAsked: Array<number | undefined> = [];
  const api = {
    getUpdates: async (params: { offset?: number }) => {
      offsetsAsked.push(params.offset);
      const batch = batches.shift();
      if (batch) return batch;
      controller.abort();
      return [];
    },
  } as unknown as Api;
  const written: number[] = [];
  const offsets: OffsetStore = { read: async () => undefined, write: async (_bot, id) => void written.push(id) };
  await pollUpdates({
    api,
    botId: 1,
    accountId: "default",
    offsets,
    timeoutSeconds: 1,
    signal: controller.signal,
    logger: createMemoryLogger(),
    backoff: { minMs: 1, maxMs: 1 },
    handle,
  });
  return { written, offsetsAsked };
}
