// The pairing table (docs/operations.md, "Pairing"): every way a code is refused, tried with a manual clock.
import { randomUUID } from "node:crypto";
import { describe, expect, it, onTestFinished } from "vitest";
import { openPairingStore } from "../../src/inbound/pairing-store.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { memoryStateAt } from "../support/memory-state.js";

const LIMITS = { codeTtlSeconds: 3600, maxPending: 3 };
const HOUR = 3_600_000;

/** The table on an in-memory port kept under `place`: opening the same place again reopens what it holds. */
async function open(place: string, now: () => number) {
  const state = memoryStateAt(place);
  const store = await openPairingStore({ state, path: "pairing.json", now });
  return {
    store,
    async close() {
      await store.close();
      await state.close();
    },
  };
}

/** A stranger on Telegram's default account (or `accountId`). */
const stranger = (senderId: string, accountId = "default") => ({
  channel: "telegram",
  accountId,
  senderId,
  username: `user${senderId}`,
  chatId: senderId,
  sessionKey: "agent:main:main",
});

async function codeFor(store: Awaited<ReturnType<typeof open>>["store"], senderId: string, accountId?: string) {
  const asked = await store.ask(stranger(senderId, accountId), LIMITS);
  if (asked.status !== "created") throw new Error(`no code: ${asked.status}`);
  return asked.request.code;
}

describe("openPairingStore", () => {
  it("gives an 8-character code of unambiguous letters and digits that expires after codeTtlSeconds", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const asked = await store.ask(stranger("222"), { codeTtlSeconds: 90, maxPending: 3 });
    expect(asked.status).toBe("created");
    if (asked.status !== "created") return;
    expect(asked.request.code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(asked.request.expiresAt - clock.now()).toBe(90_000);
  });

  it("approves a code: its sender is in, durably (after a reopen), and the code is listed no more", async () => {
    const clock = createManualClock();
    const place = randomUUID();
    const first = await open(place, clock.now);
    const code = await codeFor(first.store, "222");
    expect(first.store.list().pending.map((p) => p.code)).toEqual([code]);
    expect(first.store.isPaired("telegram", "default", "222")).toBe(false);
    expect((await first.store.approve(code, "telegram:111")).ok).toBe(true);
    await first.close();
    const again = await open(place, clock.now);
    onTestFinished(again.close);
    expect(again.store.isPaired("telegram", "default", "222")).toBe(true);
    expect(again.store.list()).toMatchObject({
      pending: [],
      allowed: [{ senderId: "222", approvedBy: "telegram:111" }],
    });
    // The approval is waiting to be announced until a gateway hands the notice over.
    expect(again.store.unannounced().map((r) => r.code)).toEqual([code]);
    await again.store.announced(code);
    expect(again.store.unannounced()).toEqual([]);
  });

  it("refuses an expired code, and lets nobody in", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const code = await codeFor(store, "222");
    clock.advance(HOUR);
    expect(await store.approve(code, "cli")).toMatchObject({ ok: false, reason: "expired" });
    expect(store.isPaired("telegram", "default", "222")).toBe(false);
    expect(store.list().pending).toEqual([]);
  });

  it("refuses a code used once already, approved or denied", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const approved = await codeFor(store, "222");
    const denied = await codeFor(store, "333");
    expect((await store.approve(approved, "cli")).ok).toBe(true);
    expect((await store.deny(denied, "cli")).ok).toBe(true);
    expect(await store.approve(approved, "cli")).toMatchObject({ ok: false, reason: "used" });
    expect(await store.deny(approved, "cli")).toMatchObject({ ok: false, reason: "used" });
    expect(await store.approve(denied, "cli")).toMatchObject({ ok: false, reason: "used" });
    expect(store.isPaired("telegram", "default", "333")).toBe(false);
  });

  it("refuses a code of another account, and an unknown code", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const code = await codeFor(store, "222", "work");
    expect(await store.approve(code, "telegram:111", { channel: "telegram", accountId: "default" })).toMatchObject({
      ok: false,
      reason: "wrong-account",
    });
    expect(await store.approve(code, "discord:111", { channel: "discord", accountId: "work" })).toMatchObject({
      ok: false,
      reason: "wrong-account",
    });
    expect(await store.approve("ABCDEFGH", "cli")).toEqual({ ok: false, reason: "unknown" });
    expect(store.isPaired("telegram", "work", "222")).toBe(false);
    // The right account still can; being let in on "work" does not let the sender in on "default".
    expect((await store.approve(code, "telegram:9", { channel: "telegram", accountId: "work" })).ok).toBe(true);
    expect(store.isPaired("telegram", "work", "222")).toBe(true);
    expect(store.isPaired("telegram", "default", "222")).toBe(false);
  });

  it("gives one sender one code at a time, also after a denial, and a new one once it would have expired", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const code = await codeFor(store, "222");
    expect((await store.ask(stranger("222"), LIMITS)).status).toBe("rate-limited");
    await store.deny(code, "cli");
    clock.advance(HOUR - 1);
    expect((await store.ask(stranger("222"), LIMITS)).status).toBe("rate-limited");
    clock.advance(1);
    expect((await store.ask(stranger("222"), LIMITS)).status).toBe("created");
  });

  it("keeps at most maxPending codes waiting per account in a flood of strangers; a decided or expired code frees a place", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const asked = [];
    for (let i = 0; i < 50; i++) asked.push((await store.ask(stranger(String(1000 + i)), LIMITS)).status);
    expect(asked.filter((s) => s === "created")).toHaveLength(3);
    expect(asked.slice(3).every((s) => s === "full")).toBe(true);
    // Another account has places of its own.
    expect((await store.ask(stranger("1000", "work"), LIMITS)).status).toBe("created");
    const [first] = store.list({ channel: "telegram", accountId: "default" }).pending;
    await store.deny(first!.code, "cli");
    expect((await store.ask(stranger("2000"), LIMITS)).status).toBe("created");
    expect((await store.ask(stranger("2001"), LIMITS)).status).toBe("full");
    clock.advance(HOUR);
    expect((await store.ask(stranger("2001"), LIMITS)).status).toBe("created");
  });

  it("still names a reused code as used until a day after it would have expired, then forgets it", async () => {
    const clock = createManualClock();
    const { store, close } = await open(randomUUID(), clock.now);
    onTestFinished(close);
    const code = await codeFor(store, "222");
    await store.deny(code, "cli");
    clock.advance(HOUR + 24 * HOUR - 1); // a day after it would have expired
    await store.ask(stranger("999"), LIMITS);
    expect(await store.approve(code, "cli")).toMatchObject({ reason: "used" });
    clock.advance(1);
    await store.ask(stranger("998"), LIMITS);
    expect(await store.approve(code, "cli")).toEqual({ ok: false, reason: "unknown" });
  });
});
