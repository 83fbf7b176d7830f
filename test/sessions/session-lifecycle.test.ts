import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema, parseSessionKey } from "../../src/routing/index.js";
import { BARE_RESET_PROMPT, createSessionLifecycle } from "../../src/sessions/session-lifecycle.js";
import { createSessionStore } from "../../src/sessions/session-store.js";
import { openMemoryState } from "../../src/state/memory-state.js";
import { ADA, telegramDm } from "../support/telegram-dm.js";

const HOUR = 3_600_000;
// 2026-01-18 05:00 in the host's zone; the daily boundary is 04:00 local.
const at = (h: number, m = 0) => new Date(2026, 0, 18, h, m).getTime();

async function setup(session: Record<string, unknown> = {}, now = at(5)) {
  const store = await createSessionStore({
    path: "sessions.json",
    keys: {},
    logger: createMemoryLogger(),
    state: openMemoryState(),
  });
  let n = 0;
  const clock = { now };
  const lifecycle = createSessionLifecycle({
    session: parseConfig({ session }).config.session,
    now: () => clock.now,
    newSessionId: () => `00000000-0000-4000-8000-00000000000${++n}`,
  });
  return { store, lifecycle, clock };
}

const dm = (text: string) => telegramDm(text, { sender: ADA });
const key = (k: string) => parseSessionKey(k)!;

describe("createSessionLifecycle.startTurn", () => {
  it("creates the session on the first message with its metadata and transcript name", async () => {
    const { store, lifecycle } = await setup();
    const turn = await lifecycle.startTurn(store, { parsed: key("agent:main:telegram:dm:42"), message: dm("hello") });
    expect(turn).toMatchObject({ isNew: true, reason: "first", body: "hello", greeting: false });
    expect(turn.entry).toMatchObject({
      sessionId: "00000000-0000-4000-8000-000000000001",
      sessionFile: "00000000-0000-4000-8000-000000000001.jsonl",
      updatedAt: at(5),
      createdAt: at(5),
      displayName: "Ada",
      deliveryContext: { channel: "telegram", to: "42", accountId: "default" },
    });
  });

  it("continues a fresh session and moves updatedAt to the turn", async () => {
    const { store, lifecycle, clock } = await setup();
    const first = await lifecycle.startTurn(store, { parsed: key("agent:main:main"), message: dm("a") });
    clock.now = at(6);
    const second = await lifecycle.startTurn(store, { parsed: key("agent:main:main"), message: dm("b") });
    expect(second).toMatchObject({ isNew: false, reason: "continued" });
    expect(second.entry.sessionId).toBe(first.entry.sessionId);
    expect(second.entry.updatedAt).toBe(at(6));
  });

  it("/send override survives: starts a new sessionId after the daily boundary, keeping what docs/sessions.md says a new session keeps", async () => {
    const { store, lifecycle } = await setup();
    await store.patch("agent:main:main", () => ({
      sessionId: "old",
      updatedAt: at(3),
      thinkingLevel: "high",
      sendPolicy: "deny",
      label: "keep",
      elevatedLevel: "on",
      groupActivation: "always",
      modelOverride: "gpt-4o",
      providerOverride: "openai",
      totalTokens: 500,
      responseUsage: "full",
      queueMode: "collect",
      compactionCount: 3,
    }));
    const turn = await lifecycle.startTurn(store, { parsed: key("agent:main:main"), message: dm("morning") });
    expect(turn).toMatchObject({ isNew: true, reason: "stale-daily", previousSessionId: "old" });
    expect(turn.entry).toMatchObject({
      label: "keep",
      elevatedLevel: "on",
      groupActivation: "always",
      totalTokens: 500,
      sendPolicy: "deny",
      compactionCount: 0,
    });
    for (const gone of ["thinkingLevel", "modelOverride", "providerOverride", "responseUsage", "queueMode"])
      expect(turn.entry).not.toHaveProperty(gone);
  });

  it("recording metadata does not make a stale session look fresh", async () => {
    const { store, lifecycle } = await setup();
    await store.patch("agent:main:main", () => ({ sessionId: "old", updatedAt: at(3) }));
    await lifecycle.recordMetadata(store, key("agent:main:main"), dm("hi"));
    expect(store.get("agent:main:main")).toMatchObject({
      updatedAt: at(3),
      deliveryContext: { channel: "telegram", to: "42" },
    });
    const turn = await lifecycle.startTurn(store, { parsed: key("agent:main:main"), message: dm("hi") });
    expect(turn).toMatchObject({ isNew: true, reason: "stale-daily" });
  });

  it("rewrites no row when a message's metadata is what the entry already holds, and records a new route", async () => {
    const { store, lifecycle } = await setup();
    await lifecycle.startTurn(store, { parsed: key("agent:main:main"), message: dm("hi") });
    const before = store.get("agent:main:main");
    // The same chat again (a burst queued behind a running turn): the stored row is left as it is.
    expect(await lifecycle.recordMetadata(store, key("agent:main:main"), dm("again"))).toBe(before);
    const other = { ...dm("from another account"), accountId: "second" };
    expect(await lifecycle.recordMetadata(store, key("agent:main:main"), other)).toMatchObject({
      deliveryContext: { channel: "telegram", to: "42", accountId: "second" },
    });
  });

  it("does not create an entry when only metadata is recorded", async () => {
    const { store, lifecycle } = await setup();
    expect(await lifecycle.recordMetadata(store, key("agent:main:main"), dm("hi"))).toBeUndefined();
    expect(store.get("agent:main:main")).toBeUndefined();
  });

  it.each([
    [
      "a thread with its own idle policy ignores the daily boundary",
      { reset: { mode: "daily", atHour: 4 }, resetByType: { thread: { mode: "idle", idleMinutes: 180 } } },
      "agent:main:main:thread:123",
      at(3),
      false,
    ],
    [
      "a thread-only override leaves DMs on the daily default",
      { resetByType: { thread: { mode: "idle", idleMinutes: 60 } } },
      "agent:main:telegram:dm:42",
      at(3),
      true,
    ],
    [
      "the channel override wins over type and legacy settings",
      {
        idleMinutes: 60,
        resetByType: { dm: { mode: "idle", idleMinutes: 10 } },
        resetByChannel: { discord: { mode: "idle", idleMinutes: 10080 } },
      },
      "agent:main:discord:dm:123",
      at(5) - 10079 * 60_000,
      false,
    ],
  ])("%s", async (_name, session, k, updatedAt, isNew) => {
    const { store, lifecycle } = await setup(session);
    await store.patch(k, () => ({ sessionId: "old", updatedAt }));
    const turn = await lifecycle.startTurn(store, { parsed: key(k) });
    expect(turn.isNew).toBe(isNew);
  });

  it("a bare /new from an authorized sender starts a new session and asks for the greeting", async () => {
    const { store, lifecycle } = await setup();
    await store.patch("agent:main:main", () => ({ sessionId: "old", updatedAt: at(4, 30), sendPolicy: "deny" }));
    const turn = await lifecycle.startTurn(store, {
      parsed: key("agent:main:main"),
      message: dm("/new"),
      reset: { firstMessage: "", said: "/new" },
    });
    expect(turn).toMatchObject({ isNew: true, reason: "trigger", greeting: true, body: "", previousSessionId: "old" });
    expect(turn.entry.sendPolicy).toBe("deny");
    expect(BARE_RESET_PROMPT).toContain("A new session was started via /new or /reset");
  });

  it("a trigger's text without a reset (from a sender who may not reset) is an ordinary message", async () => {
    const { store, lifecycle } = await setup();
    await store.patch("agent:main:main", () => ({ sessionId: "old", updatedAt: at(4, 30) }));
    const turn = await lifecycle.startTurn(store, {
      parsed: key("agent:main:main"),
      message: dm("/new"),
    });
    expect(turn).toMatchObject({ isNew: false, reason: "continued", body: "/new", greeting: false });
  });

  it("a reset to a model sets the model override and passes its first message on", async () => {
    const { store, lifecycle } = await setup();
    const turn = await lifecycle.startTurn(store, {
      parsed: key("agent:main:main"),
      message: dm("/new minimax summarize"),
      reset: {
        firstMessage: "summarize",
        said: "/new minimax summarize",
        model: { provider: "minimax", model: "m2.1" },
      },
    });
    expect(turn).toMatchObject({
      isNew: true,
      body: "summarize",
      greeting: false,
      model: { provider: "minimax", model: "m2.1" },
    });
    expect(turn.entry).toMatchObject({ providerOverride: "minimax", modelOverride: "m2.1" });
  });

  it("names the transcript of a forum topic session after its topic", async () => {
    const { store, lifecycle } = await setup();
    const message = InboundMessageSchema.parse({
      channel: "telegram",
      chat: { type: "group", id: "123", isForum: true, threadId: "456" },
      sender: { id: "1" },
      text: "x",
    });
    const turn = await lifecycle.startTurn(store, { parsed: key("agent:main:telegram:group:123:topic:456"), message });
    expect(turn.entry.sessionFile).toBe(`${turn.entry.sessionId}-topic-456.jsonl`);
  });
});

describe("createSessionLifecycle.startIsolatedRun", () => {
  it("mints a new sessionId on every cron run, carrying only the fields an isolated run keeps", async () => {
    const { store, lifecycle } = await setup();
    await store.patch("agent:main:cron:nightly", () => ({
      sessionId: "run-0",
      updatedAt: at(4, 59),
      sendPolicy: "deny",
      model: "offline/echo",
      displayName: "x",
      totalTokens: 9,
    }));
    const first = await lifecycle.startIsolatedRun(store, key("agent:main:cron:nightly"));
    const second = await lifecycle.startIsolatedRun(store, key("agent:main:cron:nightly"));
    expect(new Set(["run-0", first.sessionId, second.sessionId]).size).toBe(3);
    expect(second).toMatchObject({ sendPolicy: "deny", model: "offline/echo", updatedAt: at(5) });
    expect(second).not.toHaveProperty("displayName");
    expect(second).not.toHaveProperty("totalTokens");
  });
});

describe("createSessionLifecycle.freshness", () => {
  it("tells when a session will expire", async () => {
    const { lifecycle } = await setup({}, at(5));
    const entry = { sessionId: "s", updatedAt: at(4, 30) };
    expect(lifecycle.freshness(entry, key("agent:main:main"))).toEqual({ fresh: true, expiresAt: at(4) + 24 * HOUR });
  });
});
