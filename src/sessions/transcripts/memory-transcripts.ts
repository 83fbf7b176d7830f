import { archiveName, checkedMessage, newTranscriptHeader, pageOf } from "./stored-transcript.js";
import type { TranscriptHeader, TranscriptMessage } from "./transcript-event.js";
import { assertTranscriptId } from "./transcript-path.js";
import type { TranscriptListing, Transcripts } from "./transcripts-port.js";

/** One transcript in memory: its header and its events, numbered from 1. */
interface Stored {
  header: TranscriptHeader;
  events: { seq: number; message: TranscriptMessage; bytes: number }[];
  bytes: number;
  updatedAt: number;
}

/** Transcripts kept in memory (unit tests): the same behaviour as the stored backends, nothing durable. */
export function createMemoryTranscripts(deps: { now?: () => number; scope?: string } = {}): Transcripts {
  const { now = Date.now, scope = "memory" } = deps;
  const live = new Map<string, Stored>();
  const archives = new Map<string, Stored>();
  const listing = (id: string, t: Stored, archivedAt?: number): TranscriptListing => ({
    id,
    bytes: t.bytes,
    updatedAt: t.updatedAt,
    ...(archivedAt !== undefined && { archivedAt }),
  });
  return {
    scope,
    location: (id) => `memory:${scope}/${id}`,
    async append(id, input, options) {
      const nowMs = now();
      const message = checkedMessage(input, nowMs);
      const t = live.get(assertTranscriptId(id)) ?? {
        header: newTranscriptHeader(id, options, nowMs),
        events: [],
        bytes: 0,
        updatedAt: nowMs,
      };
      live.set(id, t);
      const bytes = JSON.stringify(message).length;
      t.events.push({ seq: t.events.length + 1, message, bytes });
      t.bytes += bytes;
      t.updatedAt = nowMs;
    },
    async readTail(id, options) {
      const t = archives.get(id) ?? live.get(assertTranscriptId(id));
      return pageOf(t?.events ?? [], options, (t?.events.length ?? 0) + 1);
    },
    async recent(id, limit) {
      return (await this.readTail(id, { limit, includeTools: true })).messages;
    },
    async preview(id, limit) {
      return (await this.readTail(id, { limit })).messages;
    },
    readHeader: async (id) => (archives.get(id) ?? live.get(assertTranscriptId(id)))?.header,
    async remove(id, options) {
      const t = live.get(assertTranscriptId(id));
      if (!t) return undefined;
      live.delete(id);
      let name = archiveName(id, options?.now ?? now(), 0);
      for (let n = 1; archives.has(name); n++) name = archiveName(id, options?.now ?? now(), n);
      archives.set(name, { ...t, updatedAt: options?.now ?? now() });
      return name;
    },
    purge: async (id) => archives.delete(id) || live.delete(id),
    list: async () => [
      ...[...live].map(([id, t]) => listing(id, t)),
      ...[...archives].map(([id, t]) => listing(id, t, t.updatedAt)),
    ],
    stat: async (id) => {
      const t = live.get(assertTranscriptId(id));
      return t && listing(id, t);
    },
    // Nothing is kept apart from the stored events.
    forget: () => undefined,
    close: async () => undefined,
  };
}
