import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ENDED_KEEP_MS, TOOL_RECORD_KEEP_MS, openToolRecord } from "../../src/agents/tool-record.js";
import { partOf } from "../../src/routing/partition.js";
import { openMemoryState } from "../../src/state/memory-state.js";
import { memoryStateAt } from "../support/memory-state.js";

/** A record on an in-memory port kept under `place`: opening it again is a restart. */
const open = (place: string, now: () => number = () => 1_000) =>
  openToolRecord({ state: memoryStateAt(place), path: `${place}/tool-calls.json`, now });

const send = { sessionKey: "agent:main:ops", message: "ping" };

describe("openToolRecord", () => {
  it("gives a call the id <runId>:<position> and finds its outcome after a restart", async () => {
    const place = randomUUID();
    const record = await open(place);
    expect(record.slot("run-1", 0, "sessions_send", send)).toEqual({ callId: "run-1:0" });
    await record.put("run-1:0", {
      runId: "run-1",
      sessionKey: "agent:main:main",
      name: "sessions_send",
      input: send,
      outcome: { ok: true, output: { status: "ok", reply: "pong" } },
    });
    const reopened = await open(place);
    expect(reopened.slot("run-1", 0, "sessions_send", { message: "ping", sessionKey: "agent:main:ops" })).toEqual({
      callId: "run-1:0",
      recorded: { ok: true, output: { status: "ok", reply: "pong" } },
    });
    expect(reopened.slot("run-1", 1, "sessions_send", send)).toEqual({ callId: "run-1:1" });
    expect(reopened.slot("run-2", 0, "sessions_send", send)).toEqual({ callId: "run-2:0" });
  });

  it("keeps an error the model was told, as an error", async () => {
    const place = randomUUID();
    const record = await open(place);
    await record.put("run-1:0", {
      runId: "run-1",
      sessionKey: "agent:main:main",
      name: "mcp__charge",
      input: {},
      outcome: { ok: false, error: "declined" },
    });
    expect((await open(place)).slot("run-1", 0, "mcp__charge", {}).recorded).toEqual({ ok: false, error: "declined" });
  });

  it("does not answer a different call at a recorded position, and gives it an id of its own", async () => {
    const record = await open(randomUUID());
    await record.put("run-1:0", {
      runId: "run-1",
      sessionKey: "agent:main:main",
      name: "write",
      input: { path: "a" },
      outcome: { ok: true, output: 1 },
    });
    expect(record.slot("run-1", 0, "write", { path: "b" })).toEqual({ callId: "run-1:0~2" });
    expect(record.slot("run-1", 0, "append", { path: "a" })).toEqual({ callId: "run-1:0~2" });
    await record.put("run-1:0~2", {
      runId: "run-1",
      sessionKey: "agent:main:main",
      name: "write",
      input: { path: "b" },
      outcome: { ok: true, output: 2 },
    });
    expect(record.slot("run-1", 0, "write", { path: "b" })).toEqual({
      callId: "run-1:0~2",
      recorded: { ok: true, output: 2 },
    });
    expect(record.slot("run-1", 0, "write", { path: "a" }).recorded).toEqual({ ok: true, output: 1 });
  });

  it("forgets a run's calls, and sweeps calls older than the inbox's dedupe memory at open", async () => {
    const place = randomUUID();
    let now = 1_000;
    const record = await open(place, () => now);
    const put = (runId: string, position: number) =>
      record.put(`${runId}:${position}`, {
        runId,
        sessionKey: "agent:main:main",
        name: "read",
        input: { position },
        outcome: { ok: true, output: "x" },
      });
    await Promise.all([put("run-1", 0), put("run-1", 1), put("run-2", 0)]);
    await record.forget("run-1");
    const reopened = await open(place, () => now);
    expect(reopened.size).toBe(1);
    expect(reopened.slot("run-1", 0, "read", { position: 0 }).recorded).toBeUndefined();
    expect(reopened.slot("run-2", 0, "read", { position: 0 }).recorded).toEqual({ ok: true, output: "x" });
    now += TOOL_RECORD_KEEP_MS;
    expect((await open(place, () => now)).size).toBe(0);
  });

  it("keeps the calls of a run that ended without a reply a minute longer (its message is marked done meanwhile), then drops them", async () => {
    const place = randomUUID();
    let now = 1_000;
    const record = await open(place, () => now);
    await record.put("run-3:0", {
      runId: "run-3",
      sessionKey: "agent:main:main",
      name: "append",
      input: {},
      outcome: { ok: true, output: 1 },
    });
    await record.put("run-4:0", {
      runId: "run-4",
      sessionKey: "agent:main:main",
      name: "append",
      input: {},
      outcome: { ok: true, output: 1 },
    });
    now += ENDED_KEEP_MS;
    await record.ended("run-3");
    expect(record.slot("run-3", 0, "append", {}).recorded).toEqual({ ok: true, output: 1 });
    now += ENDED_KEEP_MS;
    await record.ended("run-5");
    expect(record.slot("run-3", 0, "append", {}).recorded).toBeUndefined();
    expect((await open(place, () => now)).slot("run-4", 0, "append", {}).recorded).toEqual({ ok: true, output: 1 });
  });

  it("leaves the calls of a run whose partition it gave up to the next holder: they come back kept, not dropped by its end here", async () => {
    let now = 1_000;
    const of = (sessionKey: string) => partOf(sessionKey, 16);
    const part = of("agent:main:main");
    const state = openMemoryState({ data: new Map(), parts: { of, held: [part] } });
    const record = await openToolRecord({ state, path: "tool-calls.json", now: () => now });
    const call = { runId: "run-3", sessionKey: "agent:main:main", name: "append", input: {} };
    await record.put("run-3:0", { ...call, outcome: { ok: true, output: 1 } });
    now += ENDED_KEEP_MS;
    await record.ended("run-3");
    await state.parted!.evict([part]);
    await state.parted!.adopt([part]);
    now += ENDED_KEEP_MS;
    await record.ended("run-5"); // a sweep: run-3's end here no longer counts
    expect(record.slot("run-3", 0, "append", {}).recorded).toEqual({ ok: true, output: 1 });
  });
});
