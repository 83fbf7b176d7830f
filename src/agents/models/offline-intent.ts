/** A tool call the offline model reads from a plain-language message. */
export interface OfflineIntent {
  toolName: string;
  input: Record<string, string>;
}

interface Phrase {
  pattern: RegExp;
  toolName: string;
  input: (match: RegExpExecArray) => Record<string, string>;
}

// Keys contain ':' ("agent:main:main"), so `send to` splits at the last ':' before whitespace.
const PHRASES: readonly Phrase[] = [
  { pattern: /^list sessions\b/i, toolName: "sessions_list", input: () => ({}) },
  {
    pattern: /^send to\s+(\S+):\s+(\S[\s\S]*)$/i,
    toolName: "sessions_send",
    input: (m) => ({ sessionKey: m[1]!, message: m[2]!.trim() }),
  },
  { pattern: /^spawn:\s*(\S[\s\S]*)$/i, toolName: "sessions_spawn", input: (m) => ({ task: m[1]!.trim() }) },
  { pattern: /^history\s+(\S+)$/i, toolName: "sessions_history", input: (m) => ({ sessionKey: m[1]! }) },
  { pattern: /^(?:list\s+)?agents$/i, toolName: "agents_list", input: () => ({}) },
];

/** The tool call a message asks for ("list sessions", "send to <key>: <text>", ...), or undefined. */
export function matchOfflineIntent(text: string): OfflineIntent | undefined {
  const trimmed = text.trim();
  for (const phrase of PHRASES) {
    const match = phrase.pattern.exec(trimmed);
    if (match) return { toolName: phrase.toolName, input: phrase.input(match) };
  }
  return undefined;
}
