import { runTranscriptsContract } from "../../contracts/transcripts-contract.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createTranscripts } from "../../../src/sessions/transcripts/index.js";

runTranscriptsContract({
  name: "local JSONL files",
  open: async (dir, now) => createTranscripts({ dir, logger: createMemoryLogger(), now }),
});
