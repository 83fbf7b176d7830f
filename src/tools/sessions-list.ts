import { z } from "zod";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { transcriptRef } from "../sessions/agent-sessions.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import { isToolMessage } from "../sessions/transcripts/index.js";
import { canSee, displayKeyOf } from "./session-access.js";
import type { ToolDeps } from "./tool-deps.js";
import { type ToolCaller, defineTool, wholeNumber } from "./tool-definition.js";

/** The kinds sessions_list reports and filters on. */
const LIST_KINDS = ["main", "dm", "group", "cron", "hook", "node", "subagent", "other"] as const;
type ListKind = (typeof LIST_KINDS)[number];

function listKind(parsed: ParsedSessionKey): ListKind {
  if (parsed.kind === "channel") return "group";
  return (LIST_KINDS as readonly string[]).includes(parsed.kind) ? (parsed.kind as ListKind) : "other";
}

function channelOf(kind: ListKind, parsed: ParsedSessionKey, entry: SessionEntry): string {
  if (kind === "cron" || kind === "hook" || kind === "node" || kind === "subagent") return "internal";
  return parsed.channel ?? entry.channel ?? entryDeliveryContext(entry)?.channel ?? "unknown";
}

type ListedRow = {
  key: string;
  parsed: ParsedSessionKey;
  entry: SessionEntry;
  kind: ListKind;
  transcripts: Awaited<ReturnType<ToolDeps["sessions"]["forAgent"]>>["transcripts"];
  agentId: string;
};

/** One session as sessions_list reports it, with its last messages (tool results left out) when asked for. */
async function sessionSummary(deps: ToolDeps, caller: ToolCaller, row: ListedRow, messageLimit: number) {
  const { key, parsed, entry, kind, transcripts, agentId } = row;
  const route = entryDeliveryContext(entry);
  const ref = transcriptRef(entry);
  const messages =
    messageLimit > 0 ? (await transcripts.preview(ref, messageLimit)).filter((m) => !isToolMessage(m)) : undefined;
  return {
    key: displayKeyOf(deps, caller, key, agentId),
    kind,
    channel: channelOf(kind, parsed, entry),
    displayName: entry.displayName,
    updatedAt: entry.updatedAt,
    sessionId: entry.sessionId,
    model: entry.model,
    contextTokens: entry.contextTokens,
    totalTokens: entry.totalTokens ?? (entry.inputTokens ?? 0) + (entry.outputTokens ?? 0),
    thinkingLevel: entry.thinkingLevel,
    verboseLevel: entry.verboseLevel,
    systemSent: entry.systemSent,
    abortedLastRun: entry.abortedLastRun,
    sendPolicy: entry.sendPolicy,
    lastChannel: route?.channel,
    lastTo: route?.to,
    deliveryContext: route,
    transcriptPath: transcripts.location(ref),
    ...(messages && { messages }),
  };
}

/** `sessions_list`: the sessions the caller can see, newest first, optionally with their last messages. */
export const sessionsListTool = defineTool({
  name: "sessions_list",
  description: "List sessions (newest first) with optional filters and each session's last messages.",
  input: z.strictObject({
    // A bare string is one kind ("cron" = ["cron"]); the model is shown the array form.
    kinds: z
      .preprocess((value) => (typeof value === "string" ? [value] : value), z.array(z.enum(LIST_KINDS)))
      .optional()
      .describe('only these kinds, e.g. ["group", "cron"] (a single kind may be a bare string: "cron")'),
    limit: wholeNumber(1).optional().describe("rows to return, default 50, at most 200"),
    activeMinutes: wholeNumber(1).optional().describe("only sessions with a turn in the last N minutes"),
    messageLimit: wholeNumber(0)
      .optional()
      .describe("also return the last N messages of each (tool results left out), at most 20"),
  }),
  async run(input, caller, deps: ToolDeps) {
    const limit = Math.min(200, input.limit ?? 50);
    const messageLimit = Math.min(20, input.messageLimit ?? 0);
    const rows: ListedRow[] = [];
    for (const agentId of deps.agentIds()) {
      const { store, transcripts } = await deps.sessions.forAgent(agentId);
      for (const { key, parsed, entry } of store.list({
        ...(input.activeMinutes && { activeMinutes: input.activeMinutes }),
      })) {
        const kind = listKind(parsed);
        if (!canSee(deps.config, caller, parsed, entry, agentId) || (input.kinds && !input.kinds.includes(kind)))
          continue;
        rows.push({ key, parsed, entry, kind, transcripts, agentId });
      }
    }
    rows.sort((a, b) => b.entry.updatedAt - a.entry.updatedAt);
    const sessions = [];
    for (const row of rows.slice(0, limit)) sessions.push(await sessionSummary(deps, caller, row, messageLimit));
    return { count: sessions.length, sessions };
  },
});
