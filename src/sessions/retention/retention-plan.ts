import type { RetentionConfig } from "../../config/schema/session.js";

/** Session kinds retention removes; main, DM and group sessions are never among them. */
export const PRUNABLE_KINDS = ["hook", "cron", "subagent"] as const;
/** A session kind retention removes. */
export type PrunableKind = (typeof PRUNABLE_KINDS)[number];

/** Every target a prune pass knows: sessions of a kind, or archived transcripts. */
export const PRUNE_TARGETS = [...PRUNABLE_KINDS, "archives"] as const;
/** What a prune pass may remove. */
export type PruneTarget = (typeof PRUNE_TARGETS)[number];

/** The ages past which each target is removed (ms); a target absent here is kept. */
export interface RetentionPlan {
  sessions: Partial<Record<PrunableKind, number>>;
  archivesMs?: number;
}

const DAY_MS = 86_400_000;

/** What a manual prune overrides: one age for every target, and which targets. */
export interface PruneOverrides {
  olderThanMs?: number;
  targets?: readonly PruneTarget[];
}

/**
 * The plan from `session.retention` and `session.archiveRetention` (days, `0` keeps forever),
 * narrowed to `targets` and with `olderThanMs` replacing every configured age when given.
 */
export function retentionPlan(
  session: { retention: RetentionConfig; archiveRetention: number },
  overrides: PruneOverrides = {},
): RetentionPlan {
  const chosen = new Set<PruneTarget>(overrides.targets ?? PRUNE_TARGETS);
  const ageOf = (days: number): number | undefined => overrides.olderThanMs ?? (days > 0 ? days * DAY_MS : undefined);
  const plan: RetentionPlan = { sessions: {} };
  for (const kind of PRUNABLE_KINDS) {
    const age = chosen.has(kind) ? ageOf(session.retention[kind]) : undefined;
    if (age !== undefined) plan.sessions[kind] = age;
  }
  const archives = chosen.has("archives") ? ageOf(session.archiveRetention) : undefined;
  if (archives !== undefined) plan.archivesMs = archives;
  return plan;
}

/** `30d`, `12h`, `90m` or a bare number of days, in ms; undefined when it is none of those or not above 0. */
export function parseAge(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([dhm]?)\s*$/i.exec(text);
  if (!match) return undefined;
  const unit = { d: DAY_MS, h: 3_600_000, m: 60_000, "": DAY_MS }[match[2]!.toLowerCase() as "d" | "h" | "m" | ""];
  const ms = Number(match[1]) * unit;
  return ms > 0 && Number.isFinite(ms) ? Math.round(ms) : undefined;
}
