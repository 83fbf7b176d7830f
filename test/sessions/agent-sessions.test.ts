import { mkdtemp, readFile, readdir, readlink, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema, parseSessionKey } from "../../src/routing/index.js";
import { createAgentSessionsPool, openAgentSessions, transcriptRef } from "../../src/sessions/agent-sessions.js";
import { onMemoryState } from "../support/memory-state.js";

describe("openAgentSessions", () => {
  it("keeps transcripts next to the store and deletes an entry together with its transcript", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-agent-"));
    const storePath = path.join(dir, "agents", "main", "sessions", "sessions.json");
    const sessions = await openAgentSessions(
      // The store in memory; the transcripts, which this test is about, are files next to its path.
      onMemoryState(
        {
          agentId: "main",
          storePath,
          session: parseConfig({}).config.session,
          logger: createMemoryLogger(),
        },
        dir,
      ),
    );
    const message = InboundMessageSchema.parse({
      channel: "telegram",
      chat: { type: "group", id: "-100", isForum: true, threadId: "7" },
      sender: { id: "1" },
      text: "hi",
    });
    const parsed = parseSessionKey("agent:main:telegram:group:-100:topic:7")!;
    const { entry } = await sessions.lifecycle.startTurn(sessions.store, { parsed, message });
    await sessions.transcripts.append(
      transcriptRef(entry),
      { role: "user", content: "hi" },
      { sessionId: entry.sessionId },
    );
    expect(await readdir(path.dirname(storePath))).toContain(`${entry.sessionId}-topic-7.jsonl`);
    expect(
      (await sessions.transcripts.readTail(transcriptRef(entry), { limit: 5 })).messages.map((m) => m.content),
    ).toEqual(["hi"]);

    expect(await sessions.store.delete(parsed.key)).toBe(true);
    const files = await readdir(path.dirname(storePath));
    expect(files.filter((f) => f.endsWith(".jsonl"))).toEqual([]);
    expect(files.some((f) => f.startsWith(`${entry.sessionId}-topic-7.jsonl.deleted.`))).toBe(true);
    expect(sessions.store.get(parsed.key)).toBeUndefined();
  });

  it("closes every transcript file it kept open when the pool is closed (gateway stop)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-agent-pool-"));
    const pool = createAgentSessionsPool(
      // The stores in memory; the transcript files, which this test is about, in the folder.
      onMemoryState(
        {
          session: parseConfig({}).config.session,
          logger: createMemoryLogger(),
          storePathFor: (agentId: string) => path.join(dir, agentId, "sessions.json"),
        },
        dir,
      ),
    );
    const openInDir = async () => {
      const found: string[] = [];
      for (const fd of await readdir("/proc/self/fd")) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
        if (target.startsWith(`${dir}${path.sep}`) && target.endsWith(".jsonl")) found.push(path.basename(target));
      }
      return found.sort();
    };
    for (const agentId of ["main", "ops"]) {
      const { transcripts } = await pool.forAgent(agentId);
      for (const id of ["s1", "s2"]) await transcripts.append(id, { role: "user", content: `${agentId} ${id}` });
    }
    expect(await openInDir()).toEqual(["s1.jsonl", "s1.jsonl", "s2.jsonl", "s2.jsonl"]);
    await pool.close();
    expect(await openInDir()).toEqual([]);
    expect(await readFile(path.join(dir, "ops", "s2.jsonl"), "utf8")).toContain('"content":"ops s2"');
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["the default", undefined, 256],
    ["maxOpenTranscripts: 300", 300, 300],
  ])("keeps as many transcript files open between appends of 300 chats as %s allows", async (_, max, open) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-agent-handles-"));
    const storePath = path.join(dir, "sessions.json");
    const deps = { agentId: "main", storePath, session: parseConfig({}).config.session, logger: createMemoryLogger() };
    // The store in memory; the transcript files, which this test is about, in the folder.
    const sessions = await openAgentSessions(
      onMemoryState({ ...deps, ...(max !== undefined && { maxOpenTranscripts: max }) }, dir),
    );
    for (let chat = 0; chat < 300; chat++)
      await sessions.transcripts.append(`chat-${chat}`, { role: "user", content: "hi" });
    let kept = 0;
    for (const fd of await readdir("/proc/self/fd")) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
      if (target.startsWith(`${dir}${path.sep}`) && target.endsWith(".jsonl")) kept++;
    }
    expect(kept).toBe(open);
    await sessions.transcripts.close();
    await rm(dir, { recursive: true, force: true });
  });
});
