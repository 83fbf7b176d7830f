// Moved to the agents layer, which measures context for automatic compaction too.
export { type ContextSize, contextSize, estimateTokens, messageText } from "../agents/compaction/context-size.js";
