import { mkdtemp, readdir, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { openAgentSessions } from "../../../src/sessions/agent-sessions.js";
import { pruneSessions } from "../../../src/sessions/retention/prune-sessions.js";
import { parseAge, retentionPlan } from "../../../src/sessions/retention/retention-plan.js";
import { onMemoryState } from "../../support/memory-state.js";

const DAY = 86_400_000;
const START = Date.parse("2026-01-01T00:00:00Z");

/** One agent's sessions in a temp home, written at `START` (or `at`), with a transcript each. */
async function sessionsAt(sessionConfig: Record<string, unknown> = {}) {
  const now = START;
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-prune-"));
  const storePath = path.join(dir, "agents", "main", "sessions", "sessions.json");
  const { config } = parseConfig({ session: sessionConfig });
  // The store in memory; the transcripts, which retention removes, are files next to its path.
  const sessions = await openAgentSessions(
    onMemoryState(
      { agentId: "main", storePath, session: config.session, logger: createMemoryLogger(), now: () => now },
      dir,
    ),
  );
  const add = async (key: string, sessionId: string, at = START) => {
    await sessions.store.patch(key, () => ({ sessionId, updatedAt: at }));
    await sessions.transcripts.append(sessionId, { role: "user", content: `hi ${key}` });
  };
  const files = async () => (await readdir(path.dirname(storePath))).filter((f) => f.includes(".jsonl")).sort();
  return {
    config,
    sessions,
    add,
    files,
    dir: path.dirname(storePath),
  };
}

const ALL_KINDS = [
  ["agent:main:main", "s-main"],
  ["agent:main:telegram:dm:42", "s-dm"],
  ["agent:main:telegram:group:-100", "s-group"],
  ["agent:main:hook:abc", "s-hook"],
  ["agent:main:cron:nightly", "s-cron"],
  ["agent:main:subagent:x1", "s-sub"],
] as const;

describe("pruneSessions", () => {
  it("removes hook, cron and sub-agent sessions past 30 days with their transcripts, and never main, DM or group ones", async () => {
    const home = await sessionsAt();
    for (const [key, id] of ALL_KINDS) await home.add(key, id);
    const plan = retentionPlan(home.config.session);

    expect(await pruneSessions([home.sessions], plan, { now: START + 30 * DAY })).toEqual([]);
    const items = await pruneSessions([home.sessions], plan, { now: START + 30 * DAY + 1 });

    expect(items.map((i) => [i.what, i.kind, i.key])).toEqual([
      ["session", "hook", "agent:main:hook:abc"],
      ["session", "cron", "agent:main:cron:nightly"],
      ["session", "subagent", "agent:main:subagent:x1"],
    ]);
    expect(items.every((i) => i.bytes > 0)).toBe(true);
    expect(
      home.sessions.store
        .list()
        .map((r) => r.key)
        .sort(),
    ).toEqual(["agent:main:main", "agent:main:telegram:dm:42", "agent:main:telegram:group:-100"]);
    // Deleted for good: no `.deleted.` copy is left behind.
    expect(await home.files()).toEqual(["s-dm.jsonl", "s-group.jsonl", "s-main.jsonl"]);
    // Even ten years later the people's sessions stay.
    expect(await pruneSessions([home.sessions], plan, { now: START + 3650 * DAY })).toEqual([]);
  });

  it("keeps a kind forever with 0 and honours each kind's own age", async () => {
    const home = await sessionsAt({ retention: { hook: 0, cron: 7 } });
    for (const [key, id] of ALL_KINDS) await home.add(key, id);
    const items = await pruneSessions([home.sessions], retentionPlan(home.config.session), { now: START + 8 * DAY });
    expect(items.map((i) => i.key)).toEqual(["agent:main:cron:nightly"]);
    const later = await pruneSessions([home.sessions], retentionPlan(home.config.session), { now: START + 400 * DAY });
    expect(later.filter((i) => i.what === "session").map((i) => i.key)).toEqual(["agent:main:subagent:x1"]);
    expect(home.sessions.store.get("agent:main:hook:abc")).toBeDefined();
  });

  it("keeps a session whose turn starts while the pass runs", async () => {
    const home = await sessionsAt();
    await home.add("agent:main:hook:abc", "s-hook");
    const pass = pruneSessions([home.sessions], retentionPlan(home.config.session), { now: START + 31 * DAY });
    // The pass is between listing the session and removing it: a turn moves its updatedAt now.
    void home.sessions.store.patch("agent:main:hook:abc", () => ({ updatedAt: START + 31 * DAY }));
    expect(await pass).toEqual([]);
    expect(home.sessions.store.get("agent:main:hook:abc")).toBeDefined();
    expect(await home.files()).toEqual(["s-hook.jsonl"]);
  });

  it("lists without changing anything in a dry run", async () => {
    const home = await sessionsAt();
    for (const [key, id] of ALL_KINDS) await home.add(key, id);
    const before = await home.files();
    const items = await pruneSessions([home.sessions], retentionPlan(home.config.session), {
      now: START + 31 * DAY,
      dryRun: true,
    });
    expect(items).toHaveLength(3);
    expect(await home.files()).toEqual(before);
    expect(home.sessions.store.list()).toHaveLength(6);
  });

  it("removes transcripts no session points at once archiveRetention has passed, by when they were set aside", async () => {
    const home = await sessionsAt({ archiveRetention: 10 });
    await home.add("agent:main:main", "s-old");
    // /new: the main session gets a new sessionId; the old transcript is an archive from now on.
    await home.add("agent:main:main", "s-new", START + 5 * DAY);
    await home.sessions.store.patch("agent:main:telegram:dm:42", () => ({ sessionId: "s-dm", updatedAt: START }));
    await home.sessions.transcripts.append("s-dm", { role: "user", content: "hi" });
    await utimes(path.join(home.dir, "s-old.jsonl"), START / 1000, START / 1000);
    const setAside = "s-gone.jsonl.deleted.2026-01-08T00-00-00-000Z";
    await writeFile(path.join(home.dir, setAside), "{}\n");
    await writeFile(path.join(home.dir, "notes.txt"), "not a transcript\n");
    await writeFile(path.join(home.dir, "sessions.json.corrupt-2026-01-01T00-00-00-000Z"), "{");
    const plan = retentionPlan(home.config.session);

    const first = await pruneSessions([home.sessions], plan, { now: START + 10 * DAY + 1 });
    expect(first.map((i) => [i.what, path.basename(i.file)])).toEqual([["archive", "s-old.jsonl"]]);
    const second = await pruneSessions([home.sessions], plan, { now: START + 18 * DAY + 1 });
    expect(second.map((i) => path.basename(i.file))).toEqual([setAside]);
    // The current transcripts stay however old they are; other files are not ours to touch.
    expect((await readdir(home.dir)).filter((f) => f !== "sessions.json" && !f.endsWith(".meta")).sort()).toEqual([
      "notes.txt",
      "s-dm.jsonl",
      "s-new.jsonl",
      "sessions.json.corrupt-2026-01-01T00-00-00-000Z",
    ]);
  });

  it("narrows to the targets asked for and replaces every age with --older-than", async () => {
    const home = await sessionsAt({ retention: { hook: 0 } });
    for (const [key, id] of ALL_KINDS) await home.add(key, id);
    const plan = retentionPlan(home.config.session, { targets: ["hook"], olderThanMs: parseAge("2d")! });
    const items = await pruneSessions([home.sessions], plan, { now: START + 3 * DAY });
    expect(items.map((i) => i.key)).toEqual(["agent:main:hook:abc"]);
  });
});

describe("parseAge", () => {
  it.each([
    ["30d", 30 * DAY],
    ["12h", 12 * 3_600_000],
    ["90m", 90 * 60_000],
    ["7", 7 * DAY],
    ["0d", undefined],
    ["-1d", undefined],
    ["soon", undefined],
  ])("reads %s", (text, ms) => {
    expect(parseAge(text)).toBe(ms);
  });
});
