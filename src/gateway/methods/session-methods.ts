import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ParsedSessionKey } from "../../routing/session-key.js";
import type { SessionEntry } from "../../sessions/session-entry.js";
import type { SessionRow } from "../../sessions/session-select.js";
import type { GatewayCore } from "../gateway-core.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";
import type { SessionReadCore } from "./read-core.js";
import { sessionTitle } from "./session-title.js";

const KINDS = [
  "main",
  "dm",
  "group",
  "channel",
  "cron",
  "hook",
  "node",
  "subagent",
  "other",
  "global",
  "unknown",
] as const;
const keyParam = z.string().trim().min(1).describe('a session key, e.g. "agent:main:telegram:group:-100123"');

/** The title the control UI shows for a session (see {@link sessionTitle}). */
export function titleOf(core: SessionReadCore, parsed: ParsedSessionKey, entry: SessionEntry | undefined): string {
  const task = parsed.kind === "subagent" ? core.subagents.byChild(parsed.key)?.task : undefined;
  const showAgent = core.agentIds().length > 1;
  return sessionTitle({ parsed, entry, task, clientChannel: core.clientChannel, showAgent });
}

/** One row of `sessions.list`, with its title. */
export function sessionRow(core: SessionReadCore, parsed: ParsedSessionKey, agentId: string, entry: SessionEntry) {
  return {
    key: parsed.key,
    kind: parsed.kind,
    agentId,
    title: titleOf(core, parsed, entry),
    ...entry,
    totalTokens: entry.totalTokens ?? (entry.inputTokens ?? 0) + (entry.outputTokens ?? 0),
  };
}

async function findSession(core: GatewayCore, rawKey: string) {
  const { parsed, agentId } = core.parseKey(rawKey);
  const sessions = await core.sessions.forAgent(agentId);
  return { parsed, agentId, sessions, entry: sessions.store.get(parsed.key) };
}

/** `sessions.list`: every agent's sessions, newest first, filtered before the limit. */
export const sessionsList = defineMethod({
  name: "sessions.list",
  params: z.strictObject({
    limit: z.number().int().min(1).max(1000).optional(),
    activeMinutes: z.number().int().min(1).optional(),
    kinds: z.array(z.enum(KINDS)).optional(),
    agentId: z.string().trim().min(1).optional(),
    spawnedBy: z.string().trim().min(1).optional(),
    label: z.string().trim().min(1).max(64).optional(),
    search: z.string().optional(),
    includeGlobal: z.boolean().optional(),
    includeUnknown: z.boolean().optional(),
  }),
  async handle(core: SessionReadCore, p) {
    const agents = p.agentId ? [p.agentId.toLowerCase()] : core.agentIds();
    const needle = p.search?.trim().toLowerCase();
    const filter = {
      ...(p.activeMinutes && { activeMinutes: p.activeMinutes }),
      ...(p.kinds && { kinds: p.kinds }),
      ...(p.spawnedBy && { spawnedBy: core.parseKey(p.spawnedBy).parsed.key }),
      ...(p.label !== undefined && { label: p.label }),
      ...(p.limit && { limit: p.limit }),
    };
    const rows = [];
    for (const agentId of agents) {
      const { store } = await core.sessions.forAgent(agentId);
      const rowOf = ({ parsed, entry }: SessionRow) =>
        sessionRow(core, parsed, "agentId" in parsed ? parsed.agentId : agentId, entry);
      const listed = await store.select(filter, (session) => {
        const { kind } = session.parsed;
        if ((kind === "global" && !p.includeGlobal) || (kind === "unknown" && !p.includeUnknown)) return false;
        if (!needle) return true;
        const { key, entry } = session;
        const haystack = [key, rowOf(session).title, entry.sessionId, entry.displayName, entry.label, entry.subject];
        return haystack.filter(Boolean).join(" ").toLowerCase().includes(needle);
      });
      rows.push(...listed.map(rowOf));
    }
    // Each agent gave its newest `limit`; the newest `limit` of all are among them (a stable sort keeps ties in agent order).
    rows.sort((a, b) => b.updatedAt - a.updatedAt);
    const sessions = p.limit ? rows.slice(0, p.limit) : rows;
    return { count: sessions.length, sessions };
  },
});

/** `sessions.resolve`: a key, sessionId or label to the canonical key. */
export const sessionsResolve = defineMethod({
  name: "sessions.resolve",
  params: z
    .strictObject({
      key: keyParam.optional(),
      sessionId: z.string().trim().min(1).optional(),
      label: z.string().trim().min(1).max(64).optional(),
    })
    .refine((p) => [p.key, p.sessionId, p.label].filter((v) => v !== undefined).length === 1, {
      message: "give exactly one of key, sessionId or label",
    }),
  async handle(core: SessionReadCore, p) {
    if (p.key !== undefined) {
      const { parsed, agentId } = core.parseKey(p.key);
      const { store } = await core.sessions.forAgent(agentId);
      if (!store.get(parsed.key)) throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `No session found: ${p.key}`);
      return { ok: true, key: parsed.key };
    }
    const matches: string[] = [];
    for (const agentId of core.agentIds()) {
      const { store } = await core.sessions.forAgent(agentId);
      const filter = p.sessionId !== undefined ? { sessionId: p.sessionId } : { label: p.label };
      matches.push(...(await store.select(filter)).map((row) => row.key));
    }
    const what = p.sessionId !== undefined ? `sessionId ${p.sessionId}` : `label ${p.label}`;
    if (matches.length === 0) throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `No session found with ${what}`);
    if (matches.length > 1)
      throw new GatewayError(
        GatewayErrorCodes.INVALID_REQUEST,
        `Multiple sessions found with ${what} (${matches.join(", ")})`,
      );
    return { ok: true, key: matches[0] };
  },
});

/** The refusal of a label session `holder` already has (labels are unique among an agent's sessions). */
export function labelTaken(label: string, holder: string): GatewayError {
  return new GatewayError(GatewayErrorCodes.INVALID_REQUEST, `label already in use: ${label} (${holder})`);
}

/** `sessions.patch`: set or clear (null) a session's settings; creates the session when missing. */
export const sessionsPatch = defineMethod({
  name: "sessions.patch",
  params: z.strictObject({
    key: keyParam,
    label: z.string().trim().min(1).max(64).nullable().optional(),
    sendPolicy: z.enum(["allow", "deny"]).nullable().optional(),
    model: z.string().trim().min(1).nullable().optional(),
    thinkingLevel: z.enum(["off", "minimal", "low", "medium", "high"]).nullable().optional(),
    verboseLevel: z.enum(["off", "on", "full"]).nullable().optional(),
    spawnedBy: z.string().trim().min(1).nullable().optional(),
  }),
  async handle(core, p) {
    const { parsed, sessions, entry: current } = await findSession(core, p.key);
    if (p.label) {
      const taken = sessions.store.list().find((row) => row.entry.label === p.label && row.key !== parsed.key);
      if (taken) throw labelTaken(p.label, taken.key);
    }
    if (p.spawnedBy !== undefined) {
      if (parsed.kind !== "subagent")
        throw new GatewayError(GatewayErrorCodes.INVALID_REQUEST, "spawnedBy is only supported for subagent sessions");
      if (current?.spawnedBy && current.spawnedBy !== p.spawnedBy)
        throw new GatewayError(GatewayErrorCodes.INVALID_REQUEST, "spawnedBy cannot be changed or cleared once set");
    }
    let model: Partial<SessionEntry> = {};
    if (p.model !== undefined) {
      const ref = p.model === null ? undefined : core.resolveModelRef(p.model);
      const [provider, ...name] = ref?.split("/") ?? [];
      model = { providerOverride: ref ? provider : undefined, modelOverride: ref ? name.join("/") : undefined };
    }
    const now = core.now();
    const entry = await sessions.store.patch(parsed.key, () => ({
      ...(!current && { sessionId: randomUUID(), updatedAt: now, createdAt: now }),
      ...(p.label !== undefined && { label: p.label ?? undefined }),
      ...(p.sendPolicy !== undefined && { sendPolicy: p.sendPolicy ?? undefined }),
      ...(p.thinkingLevel !== undefined && {
        thinkingLevel: p.thinkingLevel === "off" || p.thinkingLevel === null ? undefined : p.thinkingLevel,
      }),
      ...(p.verboseLevel !== undefined && { verboseLevel: p.verboseLevel ?? undefined }),
      ...(p.spawnedBy !== undefined && p.spawnedBy !== null && { spawnedBy: core.parseKey(p.spawnedBy).parsed.key }),
      ...model,
    }));
    return { ok: true, key: parsed.key, entry };
  },
});

/** Fields `sessions.reset` keeps (docs/tools.md); token counts start at 0. */
const KEPT_BY_RESET = [
  "thinkingLevel",
  "verboseLevel",
  "reasoningLevel",
  "responseUsage",
  "model",
  "contextTokens",
  "sendPolicy",
  "label",
  "origin",
  "deliveryContext",
  "lastChannel",
  "lastTo",
  "lastAccountId",
  "spawnedBy",
  "providerOverride",
  "modelOverride",
];

/** `sessions.reset`: a new sessionId now, keeping settings and route. */
export const sessionsReset = defineMethod({
  name: "sessions.reset",
  params: z.strictObject({ key: keyParam }),
  async handle(core, p) {
    const { parsed, sessions } = await findSession(core, p.key);
    core.runtime.abortSession(parsed.key);
    const now = core.now();
    const entry = await sessions.store.patch(parsed.key, (current) => {
      const cleared = Object.fromEntries(
        Object.keys(current ?? {})
          .filter((f) => !KEPT_BY_RESET.includes(f))
          .map((f) => [f, undefined]),
      );
      return {
        ...cleared,
        sessionId: randomUUID(),
        createdAt: now,
        updatedAt: now,
        systemSent: false,
        abortedLastRun: false,
        inputTokens: 0,
        outputTokens: 0,
        totalTokens: 0,
      };
    });
    return { ok: true, key: parsed.key, entry };
  },
});

/** `sessions.delete`: aborts the session's work, then removes the entry and sets its transcript aside. */
export const sessionsDelete = defineMethod({
  name: "sessions.delete",
  params: z.strictObject({ key: keyParam }),
  async handle(core, p) {
    const { parsed, agentId, sessions } = await findSession(core, p.key);
    if (parsed.kind === "main" || parsed.key === core.mainKeyOf(agentId)) {
      throw new GatewayError(
        GatewayErrorCodes.INVALID_REQUEST,
        `Cannot delete the main session (${parsed.key}); use sessions.reset to start it afresh.`,
      );
    }
    const { runIds } = core.runtime.abortSession(parsed.key);
    const ended = await Promise.all(runIds.map((runId) => core.runs.wait(runId, 15_000)));
    if (ended.some((run) => run === undefined)) {
      throw new GatewayError(
        GatewayErrorCodes.UNAVAILABLE,
        `Session ${parsed.key} is still active; try again in a moment.`,
      );
    }
    const deleted = await sessions.store.delete(parsed.key);
    return { ok: true, key: parsed.key, deleted };
  },
});
