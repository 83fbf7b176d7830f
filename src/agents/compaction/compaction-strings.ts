const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The texts compaction sends to a model or writes into a summary (the command strings point here). */
export const COMPACTION_STRINGS = {
  systemPrompt:
    "You compact a conversation for an assistant that will continue it. Write a faithful summary: the people, goals, decisions, facts, open questions and the state of any work, most recent first. No preamble.",
  request: (instructions: string) =>
    `Summarize the conversation so far.${instructions ? ` Focus: ${instructions}` : ""}`,
  offline: (count: number) => `Earlier conversation (${plural(count, "message")}, compacted without a model):`,
  /** the one notice a chat gets when its context was compacted automatically */
  autoCompacted: "🧹 Context compacted: this conversation was getting long, so older messages were summarized.",
  /** the silent turn before an automatic compaction */
  memoryFlush: (file: string) =>
    `The conversation is about to be compacted: older messages will be replaced by a summary. Write anything that must survive (decisions, facts about the people, open tasks) into ${file} in your workspace with the write or edit tool (append if it exists). Reply with a short note only; this turn is not shown to anyone.`,
} as const;
