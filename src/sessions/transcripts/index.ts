export { createTranscripts } from "./create-transcripts.js";
export type { Transcripts, TranscriptListing } from "./transcripts-port.js";
export { assertValidSessionId, isValidSessionId } from "./session-id.js";
export { parseTranscriptFileName, transcriptFileName, transcriptIdOfFile } from "./transcript-path.js";
export { parseTranscriptLine } from "./parse-transcript-line.js";
export {
  isCommandMessage,
  isToolMessage,
} from "./transcript-event.js";
export type {
  ContentBlock,
  Provenance,
  TranscriptMessage,
  TranscriptMessageInput,
} from "./transcript-event.js";
