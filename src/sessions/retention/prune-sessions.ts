import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { type OpenedAgentSessions, transcriptRef } from "../agent-sessions.js";
import { parseTranscriptFileName } from "../transcripts/index.js";
import type { PrunableKind, RetentionPlan } from "./retention-plan.js";

/** One thing a prune pass removed (or, in a dry run, would remove). */
export interface PrunedItem {
  agentId: string;
  /** a session (its entry and transcript) or an archived transcript no session points at */
  what: "session" | "archive";
  kind?: PrunableKind;
  key?: string;
  /** the transcript file (absolute) */
  file: string;
  /** ms since the session's last turn, or since the archive was set aside (else last written) */
  ageMs: number;
  /** size of the file removed (0 when it was already gone) */
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

const SET_ASIDE = /\.jsonl\.(deleted|reset)\.(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z/;

async function sizeOf(file: string): Promise<{ bytes: number; mtimeMs: number } | undefined> {
  try {
    const info = await stat(file);
    return { bytes: info.size, mtimeMs: info.mtimeMs };
  } catch {
    return undefined; // gone meanwhile (or unreadable): nothing to remove
  }
}

/** Removes the sessions of the plan's kinds whose last turn is older than their kind's age. */
async function pruneEntries(agent: AgentSessions, plan: RetentionPlan, options: PruneOptions): Promise<PrunedItem[]> {
  const kinds = Object.keys(plan.sessions) as PrunableKind[];
  if (kinds.length === 0) return [];
  const items: PrunedItem[] = [];
  const tooOld = (kind: PrunableKind, updatedAt: number) => options.now - updatedAt > plan.sessions[kind]!;
  for (const { key, parsed, entry } of agent.store.list({ kinds })) {
    const kind = parsed.kind as PrunableKind;
    if (!tooOld(kind, entry.updatedAt)) continue;
    const file = agent.transcripts.pathOf(transcriptRef(entry));
    const size = await sizeOf(file);
    // Checked again in the same step as the delete: a turn that started meanwhile keeps the session.
    const current = agent.store.get(key);
    if (!current || !tooOld(kind, current.updatedAt)) continue;
    if (!options.dryRun) await agent.store.delete(key, { purge: true });
    items.push({
      agentId: agent.agentId,
      what: "session",
      kind,
      key,
      file,
      ageMs: options.now - entry.updatedAt,
      bytes: size?.bytes ?? 0,
    });
  }
  return items;
}

/** When a set-aside name says it was set aside, else undefined. */
function setAsideAt(name: string): number | undefined {
  const m = SET_ASIDE.exec(name);
  return m ? Date.parse(`${m[2]}T${m[3]}:${m[4]}:${m[5]}.${m[6]}Z`) : undefined;
}

/** Transcripts in `dir` that no session of `agents` points at (left by a reset, an isolated run, or set aside). */
async function archivesIn(dir: string, agents: AgentSessions[]): Promise<string[]> {
  const referenced = new Set<string>();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const agent of agents)
    for (const { entry } of agent.store.list())
      referenced.add(path.basename(agent.transcripts.pathOf(transcriptRef(entry))));
  return names.filter(
    (name) => SET_ASIDE.test(name) || (parseTranscriptFileName(name) !== null && !referenced.has(name)),
  );
}

/** Removes archived transcripts older than the plan's archive age, one folder at a time. */
async function pruneArchives(agents: AgentSessions[], maxAgeMs: number, options: PruneOptions): Promise<PrunedItem[]> {
  const byDir = new Map<string, AgentSessions[]>();
  for (const agent of agents) byDir.set(agent.transcripts.dir, [...(byDir.get(agent.transcripts.dir) ?? []), agent]);
  const items: PrunedItem[] = [];
  for (const [dir, owners] of byDir) {
    const transcripts = owners[0]!.transcripts;
    for (const name of await archivesIn(dir, owners)) {
      const file = path.join(dir, name);
      const size = await sizeOf(file);
      if (!size) continue;
      const ageMs = options.now - (setAsideAt(name) ?? size.mtimeMs);
      if (ageMs <= maxAgeMs) continue;
      if (!options.dryRun && !(await transcripts.purge(name))) continue;
      items.push({ agentId: owners[0]!.agentId, what: "archive", file, ageMs, bytes: size.bytes });
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
