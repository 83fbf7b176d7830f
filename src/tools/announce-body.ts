/** How a sub-agent run ended, from the runtime (never from the model's text). */
import type { SubagentOutcome } from "../agents/run-end.js";

const SECTION = /^\s*(?:[-*]\s*)?(?:\*\*)?\s*(status|result|notes)\s*(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.*)$/i;

/** Splits `Status:` / `Result:` / `Notes:` sections, tolerating bullets and `**Result:**`-style emphasis. */
export function parseAnnounceSections(reply: string): { result?: string; notes?: string } {
  const sections: Record<string, string[]> = {};
  let current: string | undefined;
  for (const line of reply.split(/\r?\n/)) {
    const match = SECTION.exec(line);
    if (match) {
      current = match[1]!.toLowerCase();
      sections[current] = match[2]!.trim() ? [match[2]!.trim()] : [];
    } else if (current) {
      sections[current]!.push(line);
    }
  }
  const text = (name: string) => sections[name]?.join("\n").trim() || undefined;
  const result = text("result");
  const notes = text("notes");
  return { ...(result && { result }), ...(notes && { notes }) };
}

function formatCount(n: number | undefined): string {
  if (n === undefined) return "n/a";
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}m`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(Math.round(n));
}

/** `45s`, `1m5s`, `2h3m`; `n/a` without a duration. */
export function formatRuntime(ms: number | undefined): string {
  if (ms === undefined || ms <= 0) return "n/a";
  const total = Math.round(ms / 1000);
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return h > 0 ? `${h}h${m}m` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/** The stats line: runtime, tokens, sessionKey, sessionId, transcript path, joined with " • ". */
export function statsLine(stats: {
  runtimeMs?: number;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  sessionKey: string;
  sessionId?: string;
  transcriptPath?: string;
}): string {
  const total =
    stats.totalTokens ??
    (stats.inputTokens !== undefined || stats.outputTokens !== undefined
      ? (stats.inputTokens ?? 0) + (stats.outputTokens ?? 0)
      : undefined);
  const parts = [
    `runtime ${formatRuntime(stats.runtimeMs)}`,
    total === undefined
      ? "tokens n/a"
      : `tokens ${formatCount(total)} (in ${formatCount(stats.inputTokens)} / out ${formatCount(stats.outputTokens)})`,
    `sessionKey ${stats.sessionKey}`,
    ...(stats.sessionId ? [`sessionId ${stats.sessionId}`] : []),
    ...(stats.transcriptPath ? [`transcript ${stats.transcriptPath}`] : []),
  ];
  return `Stats: ${parts.join(" • ")}`;
}

/** Input of {@link statsLine}. */
export type AnnounceStats = Parameters<typeof statsLine>[0];

/**
 * The stats line as `agents.defaults.subagents.announceStats` wants it: `full` (the transcript as a
 * full path for local clients, by file name elsewhere: a server path never leaves for a chat
 * platform), `brief` (runtime and tokens) or `off` (none).
 */
export function announceStatsLine(
  stats: AnnounceStats,
  options: { mode: "full" | "brief" | "off"; localClient: boolean },
): string {
  if (options.mode === "off") return "";
  if (options.mode === "brief") return statsLine({ ...stats, sessionKey: "" }).replace(/ • sessionKey .*$/, "");
  const transcript =
    stats.transcriptPath && !options.localClient ? stats.transcriptPath.split(/[\\/]/).pop() : stats.transcriptPath;
  return statsLine({ ...stats, ...(transcript ? { transcriptPath: transcript } : {}) });
}

/** The announce posted into the requester's chat: Status from the runtime, Result and Notes from the reply. */
export function announceBody(input: {
  outcome: SubagentOutcome;
  error?: string;
  reply: string;
  stats: string;
  label?: string;
}): string {
  const parsed = parseAnnounceSections(input.reply);
  const result = parsed.result ?? (input.reply.trim() || "(not available)");
  const notes =
    [parsed.notes, input.error ? `- Error: ${input.error}` : undefined].filter(Boolean).join("\n") || "- (none)";
  const title = input.label ? `Sub-agent "${input.label}"\n\n` : "";
  return `${title}Status: ${input.outcome}\n\nResult:\n${result}\n\nNotes:\n${notes}${input.stats ? `\n\n${input.stats}` : ""}`;
}
