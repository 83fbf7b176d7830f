import { type OpenedAgentSessions, transcriptRef } from "../agent-sessions.js";
import type { TranscriptListing } from "../transcripts/index.js";
import type { PrunableKind, RetentionPlan } from "./retention-plan.js";

/** One thing a prune pass removed (or, in a dry run, would remove). */
export interface PrunedItem {
  agentId: string;
  /** a session (its entry and transcript) or an archived transcript no session points at */
  what: "session" | "archive";
  kind?: PrunableKind;
  key?: string;
  /** where the transcript is (local: its file) */
  file: string;
  /** ms since the session's last turn, or since the archive was set aside (else last written) */
  ageMs: number;
  /** size of the transcript removed (0 when it was already gone) */
  bytes: number;
}

/** How a prune pass runs. */
export interface PruneOptions {
  now: number;
  /** list what would go, change nothing */
  dryRun?: boolean;
}

/** The agents' sessions a pass looks at: only `store` and `transcripts` are used. */
type AgentSessions = Pick<OpenedAgentSessions, "agentId" | "store" | "transcripts">;

/** Removes the sessions of the plan's kinds whose last turn is older than their kind's age. */
async function pruneEntries(agent: AgentSessions, plan: RetentionPlan, options: PruneOptions): Promise<PrunedItem[]> {
  const kinds = Object.keys(plan.sessions) as PrunableKind[];
  if (kinds.length === 0) return [];
  const items: PrunedItem[] = [];
  const tooOld = (kind: PrunableKind, updatedAt: number) => options.now - updatedAt > plan.sessions[kind]!;
  for (const { key, parsed, entry } of agent.store.list({ kinds })) {
    const kind = parsed.kind as PrunableKind;
    if (!tooOld(kind, entry.updatedAt)) continue;
    const id = transcriptRef(entry);
    const size = await agent.transcripts.stat(id);
    // Checked again in the same step as the delete: a turn that started meanwhile keeps the session.
    const current = agent.store.get(key);
    if (!current || !tooOld(kind, current.updatedAt)) continue;
    if (!options.dryRun) await agent.store.delete(key, { purge: true });
    items.push({
      agentId: agent.agentId,
      what: "session",
      kind,
      key,
      file: agent.transcripts.location(id),
      ageMs: options.now - entry.updatedAt,
      bytes: size?.bytes ?? 0,
    });
  }
  return items;
}

/**
 * Transcripts of one scope that no session points at (left by a reset, an isolated run, or
 * archived). Where storage can say (PostgreSQL) it decides from every session stored: with sessions
 * spread over several gateways (docs/scale-out.md) an image holds only some, and deciding from it
 * would purge the live transcripts of the others. Otherwise, from the sessions of `agents`.
 */
async function archivesIn(agents: AgentSessions[]): Promise<TranscriptListing[]> {
  const { transcripts } = agents[0]!;
  if (transcripts.unreferenced) return transcripts.unreferenced();
  const referenced = new Set<string>();
  for (const agent of agents) for (const { entry } of agent.store.list()) referenced.add(transcriptRef(entry));
  const listed = await transcripts.list();
  return listed.filter((item) => item.archivedAt !== undefined || !referenced.has(item.id));
}

/** Removes archived transcripts older than the plan's archive age, one scope (shared folder) at a time. */
async function pruneArchives(agents: AgentSessions[], maxAgeMs: number, options: PruneOptions): Promise<PrunedItem[]> {
  const byScope = new Map<string, AgentSessions[]>();
  for (const agent of agents)
    byScope.set(agent.transcripts.scope, [...(byScope.get(agent.transcripts.scope) ?? []), agent]);
  const items: PrunedItem[] = [];
  for (const owners of byScope.values()) {
    const transcripts = owners[0]!.transcripts;
    for (const item of await archivesIn(owners)) {
      const ageMs = options.now - (item.archivedAt ?? item.updatedAt);
      if (ageMs <= maxAgeMs) continue;
      const file = transcripts.location(item.id);
      if (!options.dryRun && !(await transcripts.purge(item.id))) continue;
      items.push({ agentId: owners[0]!.agentId, what: "archive", file, ageMs, bytes: item.bytes });
    }
  }
  return items;
}

/**
 * One retention pass (docs/sessions.md): sessions of the plan's kinds past their age are deleted
 * with their transcript, then transcripts no session points at any more, past the archive age.
 * Main, DM and group sessions are never touched, and a session's current transcript is never an archive.
 */
export async function pruneSessions(
  agents: AgentSessions[],
  plan: RetentionPlan,
  options: PruneOptions,
): Promise<PrunedItem[]> {
  const items: PrunedItem[] = [];
  for (const agent of agents) items.push(...(await pruneEntries(agent, plan, options)));
  // After the entries: in a dry run the sessions that would go still point at their transcripts, so those are not counted twice.
  if (plan.archivesMs !== undefined) items.push(...(await pruneArchives(agents, plan.archivesMs, options)));
  return items;
}
