// An agent's sessions on a port whose partitions change while it runs (docs/scale-out.md
// "Partitions adopted and evicted one by one"): adopted sessions are read from the image at once,
// evicted ones are gone, and what was kept of an evicted session's transcript is dropped.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { type OpenTranscripts, openAgentSessions } from "../../src/sessions/agent-sessions.js";
import { createMemoryTranscripts } from "../../src/sessions/transcripts/memory-transcripts.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { StatePort } from "../../src/state/state-port.js";

const of = (sessionKey: string) => partOf(sessionKey, 16);
const logger = createMemoryLogger();
const session = parseConfig({}).config.session;

/** Two session keys of different partitions. */
function twoKeys(): [string, string] {
  const first = "agent:main:telegram:dm:1";
  for (let n = 2; ; n++) {
    const other = `agent:main:telegram:dm:${n}`;
    if (of(other) !== of(first)) return [first, other];
  }
}

/** The agent's sessions on `state`; `forgotten` collects the transcripts they forget. */
function sessionsOn(state: StatePort, forgotten: string[] = []) {
  const openTranscripts: OpenTranscripts = () => {
    const transcripts = createMemoryTranscripts();
    return { ...transcripts, forget: (id) => forgotten.push(id) };
  };
  return openAgentSessions({
    agentId: "main",
    state,
    storePath: "sessions.json",
    session,
    logger,
    openTranscripts,
  });
}

describe("session store, partitions adopted and evicted", () => {
  it("reads an adopted session at once, and forgets an evicted one and its kept transcript", async () => {
    const data: MemoryStateData = new Map();
    const [mine, theirs] = twoKeys();
    const writer = await sessionsOn(openMemoryState({ data }));
    await writer.store.patch(mine, () => ({ sessionId: "s-mine", updatedAt: 1 }));
    await writer.store.patch(theirs, () => ({
      sessionId: "s-theirs",
      updatedAt: 2,
      sessionFile: "x/s-theirs-topic-7.jsonl",
    }));

    const forgotten: string[] = [];
    const port = openMemoryState({ data, parts: { of, held: [of(mine)] } });
    const parted = (await sessionsOn(port, forgotten)).store;
    expect(parted.get(theirs)).toBeUndefined();

    await port.parted!.adopt([of(theirs)]);
    expect(parted.get(theirs)?.sessionId).toBe("s-theirs");
    expect(parted.list().map((row) => row.key)).toEqual([theirs, mine]);
    expect(forgotten).toEqual([]);

    await port.parted!.evict([of(theirs)]);
    expect(parted.get(theirs)).toBeUndefined();
    expect(parted.list().map((row) => row.key)).toEqual([mine]);
    // transcriptRef: the transcript its sessionFile names, a topic session's own.
    expect(forgotten).toEqual(["s-theirs-topic-7"]);
  });
});
