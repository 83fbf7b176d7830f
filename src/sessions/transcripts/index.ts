export { createTranscripts, DEFAULT_CHUNK_SIZE } from "./create-transcripts.js";
export type { AppendOptions, Transcripts, TranscriptsDeps } from "./create-transcripts.js";
export type { ReadTailOptions, TranscriptPage } from "./read-tail.js";
export { assertValidSessionId, isValidSessionId, MAX_SESSION_ID_LENGTH } from "./session-id.js";
export { parseTranscriptFileName, resolveTranscriptPath, transcriptFileName } from "./transcript-path.js";
export type { TopicId, TranscriptFileName } from "./transcript-path.js";
export { parseTranscriptLine } from "./parse-transcript-line.js";
export type { ParsedTranscriptLine } from "./parse-transcript-line.js";
export {
  ContentBlockSchema,
  isCommandMessage,
  isToolMessage,
  ProvenanceSchema,
  TRANSCRIPT_ROLES,
  TRANSCRIPT_VERSION,
  TranscriptHeaderSchema,
  TranscriptMessageLineSchema,
  TranscriptMessageSchema,
  UsageSchema,
} from "./transcript-event.js";
export type {
  ContentBlock,
  Provenance,
  TranscriptHeader,
  TranscriptMessage,
  TranscriptMessageInput,
  TranscriptMessageLine,
  TranscriptRole,
} from "./transcript-event.js";
