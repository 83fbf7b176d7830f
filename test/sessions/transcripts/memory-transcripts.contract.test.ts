import { runTranscriptsContract } from "../../contracts/transcripts-contract.js";
import { createMemoryTranscripts } from "../../../src/sessions/transcripts/memory-transcripts.js";
import type { Transcripts } from "../../../src/sessions/transcripts/index.js";

// Memory keeps nothing across processes: a reopen of the same folder gets the same instance back.
const opened = new Map<string, Transcripts>();

runTranscriptsContract({
  name: "memory",
  open: async (dir, now) => {
    const t = opened.get(dir) ?? createMemoryTranscripts({ now, scope: dir });
    opened.set(dir, t);
    return t;
  },
});
