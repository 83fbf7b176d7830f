import { COMPACTION_STRINGS } from "../agents/compaction/compaction-strings.js";
import type { SendPolicyDecision } from "../delivery/send-policy.js";
import type { CronJobInfo } from "./command-deps.js";

/** Said after a thinking level the session's model cannot use. */
const NOT_REASONING = " (this session's model does not reason on request; the level is kept for when it does)";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Every text a command shows a person, in one place (tests assert against this table). */
export const STRINGS = {
  // dispatcher and gate
  usage: (usage: string, detail = "") => `${detail ? `${detail}\n` : ""}Usage: ${usage}`,
  refusedOwner: (command: string) => `Only an owner can use ${command}.`,
  refusedCommands: "You are not allowed to use commands here.",
  refusedOwnSession: (command: string) => `You can use ${command} only in your own direct chat.`,
  refusedNoTalk: (command: string) =>
    `You may run commands here but not talk to the agent, so ${command} has no conversation of yours to act on.`,
  failed: (command: string, message: string) => `${command} failed: ${message}`,
  unknownCommand: (name: string) => `Unknown command /${name}. /help lists the commands.`,
  // what a native command's interaction is answered with when the command itself says nothing
  nativeDone: "Done.",
  nativeTurn: "On it: the answer follows in this chat.",
  nativeFailed: "That command could not be handled; the gateway log has the details.",

  // /send
  sendSet: (mode: "on" | "off" | "inherit") => `Send policy set to ${mode}.`,
  sendEffective: (verdict: SendPolicyDecision) =>
    `Replies here are ${verdict.decision === "allow" ? "delivered" : "not delivered"} (${policySource(verdict)}).`,

  // /queue
  queueShown: (q: { mode: string; from: string; debounceMs: number; cap: number; overflow: string }) =>
    `Queue mode: ${q.mode} (${q.from}); debounce ${q.debounceMs} ms, cap ${q.cap}, overflow ${q.overflow}.`,
  queueSet: (mode: string) =>
    mode === "inherit" ? "Queue mode override removed." : `Queue mode set to ${mode} for this session.`,

  // /stop
  aborted: "Agent was aborted.",
  stoppedSubagents: (n: number) => `Stopped ${plural(n, "sub-agent")}.`,
  droppedQueued: (n: number) => `Dropped ${plural(n, "queued message")}.`,

  // /new, /reset
  unknownModel: (word: string, valid: string) => `Unknown model "${word}". Valid models: ${valid}. Nothing was reset.`,

  // /compact
  compactBusy: "A turn is running; wait for it to end (or /stop it), then /compact.",
  compactNothing: "Nothing to compact yet.",
  compacted: (before: { messages: number; tokens: string }, after: { tokens: string }, count: number) =>
    `Compacted ${plural(before.messages, "message")} (~${before.tokens} tokens) into a summary (~${after.tokens} tokens). Compactions: ${count}.`,
  compactSystemPrompt: COMPACTION_STRINGS.systemPrompt,
  compactRequest: COMPACTION_STRINGS.request,
  compactOffline: COMPACTION_STRINGS.offline,

  // /context
  contextHelp: [
    "/context shows what the model sees in this session:",
    "/context list - each system prompt part (workspace files too) with its size, tools and history size",
    "/context detail - the same with the text of every part and each tool description",
    "/context json - the same as JSON",
  ].join("\n"),
  contextTitle: (detailed: boolean) => (detailed ? "Context breakdown (detailed)" : "Context breakdown"),

  // /subagents
  noSubagents: "No sub-agents in this session.",
  subagentsTitle: (running: number, total: number) => `Sub-agents: ${running} running, ${total} in all`,
  noSubagentMatch: (target: string) => `No running sub-agent matches "${target}"; /subagents lists them.`,

  // /model, /think, /verbose
  modelTitle: "Models (* = this session's):",
  modelSet: (ref: string) => `Model set to ${ref} for this session (a new session goes back to the agent's model).`,
  modelUnknown: (word: string, valid: string) => `Unknown model "${word}". Valid models: ${valid}.`,
  thinkShown: (level: string, supported: boolean) => `Thinking: ${level}${supported ? "" : NOT_REASONING}.`,
  thinkSet: (level: string, supported: boolean) => `Thinking set to ${level}${supported ? "" : NOT_REASONING}.`,
  verboseShown: (on: boolean) => `Verbose: ${on ? "on" : "off"}.`,
  verboseSet: (on: boolean) => (on ? "Verbose on: each tool call is shown here while a run lasts." : "Verbose off."),
  // /cron
  cronNone: 'No scheduled jobs. Add one with: switchboard cron add --name brief --cron "0 8 * * *" --message "..."',
  cronTitle: (count: number) => `Scheduled jobs (${count}):`,
  cronLine: (job: CronJobInfo) =>
    `• ${job.name} [${job.id}] ${job.schedule}; ${job.enabled ? `next ${job.nextRun ?? "-"}` : "disabled"}; last ${job.last ?? "never"}; announce ${job.announce}`,
  cronStarted: (id: string, runId: string) => `Started ${id} (run ${runId}).`,
  cronEnabled: (id: string, enabled: boolean) => `${id} ${enabled ? "enabled" : "disabled"}.`,
  cronRemoved: (id: string) => `Removed ${id}.`,
  cronUnknown: (id: string) => `No job "${id}"; /cron lists them.`,
  cronUnavailable: "Scheduled jobs are not available here.",

  // pairing: what a stranger, the approved sender and owners read (docs/operations.md)
  pairingCode: (channel: string, senderId: string, code: string, minutes: number) =>
    [
      "Switchboard: access not configured.",
      "",
      `Your ${channel} user id: ${senderId}`,
      `Pairing code: ${code}`,
      "",
      "Ask the bot owner to approve with:",
      `switchboard pairing approve ${code}`,
      `(or /pair approve ${code} in their chat with this bot). The code expires in ${plural(minutes, "minute")}.`,
    ].join("\n"),
  pairingApproved: "✅ Switchboard access approved. Send a message to start chatting.",
  pairNone: "No pairing codes are waiting.",
  pairTitle: (count: number) => `Pairing codes waiting (${count}):`,
  pairLine: (code: string, who: string, where: string, minutesLeft: number) =>
    `• ${code} from ${who} on ${where}, expires in ${plural(minutesLeft, "minute")}`,
  pairAllowedTitle: (count: number) => `Let in by pairing (${count}):`,
  pairAllowedLine: (who: string, where: string) => `• ${who} on ${where}`,
  pairDone: (verdict: "approved" | "denied", code: string, who: string) =>
    verdict === "approved"
      ? `Approved ${code}: ${who} may now DM the bot; they are told so.`
      : `Denied ${code}: ${who} gets no new code until this one would have expired.`,
  pairUnknown: (code: string) => `No pairing code ${code}. /pair list shows the codes waiting.`,
  pairExpired: (code: string) => `Pairing code ${code} expired. The sender gets a new code when they write again.`,
  pairUsed: (code: string, status: string) => `Pairing code ${code} was already ${status}; a code works once.`,
  pairWrongAccount: (code: string, where: string) =>
    `Pairing code ${code} belongs to ${where}, not this account. Approve it from a chat of that account, or with: switchboard pairing approve ${code}`,
  pairUnavailable: "Pairing is not available here.",

  // /help
  helpTitle: "Commands (who may run them):",
  accessLabel: { commands: "command users", owner: "owners", "own-session": "owners; others in their own DM" },
} as const;

/** What decided a send-policy verdict, in words. */
export function policySource(verdict: SendPolicyDecision): string {
  if (verdict.source === "override") return "this session's /send override";
  if (verdict.source === "rule") return `rule session.sendPolicy.rules[${verdict.ruleIndex}]`;
  return `session.sendPolicy.default: ${verdict.decision}`;
}
