import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../src/logger.js";
import { serializeRecord, writeFileAtomic } from "../src/state/atomic-json-file.js";
import { createSessionStore } from "../src/sessions/session-store.js";
import { createTranscripts } from "../src/sessions/transcripts/index.js";
import { type BenchTable, measureAsync, verdict } from "./harness.js";
import { openLocalState } from "../src/state/local-state.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const SESSIONS = 10_000;

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  });
  await Promise.all(workers);
  return results;
}

/** Listing 10k sessions from the store, with and without the last 3 messages of each. */
export async function benchSessionListing(): Promise<BenchTable> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-bench-list-"));
  try {
    const transcripts = createTranscripts({ dir, logger: silent });
    const data: Record<string, unknown> = {};
    for (let i = 0; i < SESSIONS; i++) {
      const sessionId = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      data[`agent:main:telegram:dm:${i}`] = {
        sessionId,
        updatedAt: 1_700_000_000_000 + i,
        sessionFile: `${sessionId}.jsonl`,
        channel: "telegram",
      };
    }
    await writeFileAtomic(path.join(dir, "sessions.json"), serializeRecord(data));
    // 20 messages per transcript, written through the real append path.
    await mapLimited(
      Object.values(data) as Array<{ sessionId: string; sessionFile: string }>,
      16,
      async ({ sessionId, sessionFile }) => {
        for (let m = 0; m < 20; m++) {
          await transcripts.append(
            sessionFile,
            { role: m % 2 ? "assistant" : "user", content: `message ${m} of ${sessionId}` },
            { sessionId },
          );
        }
      },
    );
    const store = await createSessionStore({
      state: openLocalState({ dir, logger: silent }),
      path: path.join(dir, "sessions.json"),
      keys: {},
      logger: silent,
    });
    const listOnly = await measureAsync(async () => store.list({ limit: SESSIONS }), 10, 2);
    const withMessages = await measureAsync(
      async () => {
        const rows = store.list({ limit: SESSIONS });
        return mapLimited(rows, 32, (row) => transcripts.readTail(row.entry.sessionFile!, { limit: 3 }));
      },
      3,
      1,
    );
    // What sessions_list does: the preview, warm because this process appended the messages.
    const previewRun = async () => {
      const rows = store.list({ limit: SESSIONS });
      for (const row of rows) await transcripts.preview(row.entry.sessionFile!, 3);
    };
    const withPreview = await measureAsync(previewRun, 5, 1);
    // The first listing after a restart: every preview is cold and reads its file once.
    const cold = createTranscripts({ dir, logger: silent });
    const coldStart = performance.now();
    await mapLimited(store.list({ limit: SESSIONS }), 32, (row) => cold.preview(row.entry.sessionFile!, 3));
    const coldMs = performance.now() - coldStart;
    // Transcripts keep appended files open: give them back as the gateway does at stop.
    await Promise.all([transcripts.close(), cold.close()]);
    return {
      title: `listing ${SESSIONS.toLocaleString("en-US")} sessions (20-message transcripts)`,
      rows: [
        {
          case: "store.list, rows only",
          "median ms": Number(listOnly.toFixed(1)),
          "per session µs": Number(((listOnly * 1000) / SESSIONS).toFixed(2)),
        },
        {
          case: "store.list + readTail(3) each (32 reads in flight)",
          "median ms": Math.round(withMessages),
          "per session µs": Number(((withMessages * 1000) / SESSIONS).toFixed(1)),
        },
        {
          case: "store.list + preview(3) each, warm (as sessions_list)",
          "median ms": Math.round(withPreview),
          "per session µs": Number(((withPreview * 1000) / SESSIONS).toFixed(1)),
        },
        {
          case: "store.list + preview(3) each, cold (first listing after a restart, once)",
          "median ms": Math.round(coldMs),
          "per session µs": Number(((coldMs * 1000) / SESSIONS).toFixed(1)),
        },
      ],
      notes: [
        verdict("listing 10,000 with the last 3 messages (warm previews)", Math.round(withPreview), 300, "ms", true),
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
