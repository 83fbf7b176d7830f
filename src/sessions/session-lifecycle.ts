import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { SessionConfig } from "../config/schema/session.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { type Freshness, evaluateFreshness } from "./freshness.js";
import { type ResolvedResetPolicy, resetTypeOf, resolveResetPolicy } from "./reset-policy.js";
import type { SessionEntry, SessionEntryPatch } from "./session-entry.js";
import { inboundMetadataPatch } from "./session-metadata.js";
import type { SessionStore } from "./session-store.js";
import { transcriptFileName } from "./transcripts/index.js";

/** The prompt a bare `/new` or `/reset` runs instead of the (empty) message (docs/sessions.md). */
export const BARE_RESET_PROMPT =
  "A new session was started via /new or /reset. Say hi briefly (1-2 sentences) and ask what the user wants to do next. " +
  "If the runtime model differs from default_model in the system prompt, mention the default model in the greeting. " +
  "Do not mention internal steps, files, tools, or reasoning.";

/**
 * Fields a new sessionId drops (docs/sessions.md): per-turn toggles, model overrides, queue settings,
 * derived labels and routing (re-derived from the message). Everything else carries over,
 * including a `/send` override (it outlives resets), `label`, `spawnedBy`, `model` and token counters.
 */
const CLEARED_ON_NEW_SESSION = [
  "thinkingLevel",
  "verboseLevel",
  "reasoningLevel",
  "ttsAuto",
  "responseUsage",
  "modelOverride",
  "providerOverride",
  "authProfileOverride",
  "authProfileOverrideSource",
  "authProfileOverrideCompactionCount",
  "queueMode",
  "queueDebounceMs",
  "queueCap",
  "queueDrop",
  "displayName",
  "channel",
  "groupId",
  "subject",
  "groupChannel",
  "space",
  "deliveryContext",
  "lastChannel",
  "lastTo",
  "lastAccountId",
  "lastThreadId",
  "memoryFlushAt",
  "memoryFlushCompactionCount",
  "sessionFile",
] as const;

/** Fields an isolated cron or hook run carries into its fresh sessionId (docs/sessions.md). */
const KEPT_BY_ISOLATED_RUN = [
  "thinkingLevel",
  "verboseLevel",
  "model",
  "contextTokens",
  "sendPolicy",
  "deliveryContext",
  "lastChannel",
  "lastTo",
  "lastAccountId",
  "skillsSnapshot",
  "label",
  "spawnedBy",
] as const;

/** Why a turn got the sessionId it got. */
type TurnReason = "first" | "continued" | "stale-daily" | "stale-idle" | "trigger";

/**
 * A new session a reset command asked for (`/new [model] [text]`): parsed and authorized once, by
 * the command dispatcher, carried by the turn request and applied when the turn starts.
 */
export interface SessionReset {
  /** a model picked by `/new <model>` */
  model?: { provider: string; model: string };
  /** the new session's first message; empty: the agent greets ({@link BARE_RESET_PROMPT}) */
  firstMessage: string;
  /** the reset as the sender wrote it (`/new gpt-4o`): the transcript's user line when the agent greets */
  said: string;
}

/** One inbound turn about to run on a session. */
export interface TurnInput {
  parsed: ParsedSessionKey;
  /** the channel message, whose metadata is recorded on the entry */
  message?: InboundMessage;
  /** the text for the agent; default: the message text */
  text?: string;
  /** start a new session first (a `/new` or `/reset` the dispatcher authorized) */
  reset?: SessionReset;
  /** a thread the key does not show (Discord threads) */
  isThread?: boolean;
}

/** The session a turn runs on, and what the agent should be asked. */
export interface TurnStart {
  entry: SessionEntry;
  isNew: boolean;
  reason: TurnReason;
  previousSessionId?: string;
  /** the text for the agent: the message, or what followed the trigger and model words */
  body: string;
  /** a bare trigger: run {@link BARE_RESET_PROMPT} */
  greeting: boolean;
  /** a model picked by `/new <model>` */
  model?: { provider: string; model: string };
  policy: ResolvedResetPolicy;
}

/** Dependencies of {@link createSessionLifecycle}. */
export interface LifecycleDeps {
  session: Pick<SessionConfig, "reset" | "resetByType" | "resetByChannel" | "idleMinutes">;
  now?: () => number;
  newSessionId?: () => string;
}

function omit(entry: SessionEntry | undefined, fields: readonly string[]): SessionEntryPatch {
  const patch: SessionEntryPatch = {};
  for (const field of fields) if (entry && field in entry) patch[field] = undefined;
  return patch;
}

function pick(entry: SessionEntry | undefined, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => entry?.[f] !== undefined).map((f) => [f, entry![f]]));
}

/** The fields every new sessionId starts with; a topic's session names its transcript after the topic. */
function freshSessionFields(parsed: ParsedSessionKey, sessionId: string, at: number): SessionEntryPatch {
  const topic = ("topicId" in parsed && parsed.topicId) || ("threadId" in parsed && parsed.threadId) || undefined;
  return {
    sessionId,
    createdAt: at,
    updatedAt: at,
    systemSent: false,
    abortedLastRun: false,
    compactionCount: 0,
    sessionFile: transcriptFileName(sessionId, topic),
  };
}

/** Why a turn on `current` gets the sessionId it gets: a reset, a first turn, a fresh or a stale session. */
function turnReason(
  current: SessionEntry | undefined,
  reset: SessionReset | undefined,
  policy: ResolvedResetPolicy,
  at: number,
): TurnReason {
  if (reset) return "trigger";
  if (!current) return "first";
  const freshness = evaluateFreshness(current.updatedAt, policy, at);
  return freshness.fresh ? "continued" : `stale-${freshness.staleBy!}`;
}

/** What the agent is asked, given the reset (if any) and the message's text. */
function turnText(input: TurnInput): Pick<TurnStart, "body" | "greeting" | "model"> {
  const { reset } = input;
  if (!reset) return { body: input.text ?? input.message?.text ?? "", greeting: false };
  return {
    body: reset.firstMessage,
    greeting: reset.firstMessage.trim() === "",
    ...(reset.model && { model: reset.model }),
  };
}

/** True when `patch` would change `entry` (an `undefined` value removes a field, so it changes only a field that is set). */
function changesEntry(entry: SessionEntry, patch: SessionEntryPatch): boolean {
  const fields = entry as Record<string, unknown>;
  return Object.entries(patch).some(([field, value]) => !isDeepStrictEqual(fields[field], value));
}

/** The lifecycle's settings with their defaults filled in. */
type Lifecycle = Required<LifecycleDeps>;

function policyFor(
  deps: Lifecycle,
  parsed: ParsedSessionKey,
  channel: string | undefined,
  isThread?: boolean,
): ResolvedResetPolicy {
  return resolveResetPolicy(deps.session, resetTypeOf(parsed, { isThread: !!isThread }), parsed.channel ?? channel);
}

/**
 * Starts a turn without waiting for the store: a reset or an expired session gets a new sessionId,
 * otherwise the session continues; `updatedAt` moves to now and the message's metadata is recorded,
 * all in one store patch. `written` settles when the patch is durable (the runtime waits for it
 * before the turn ends).
 */
function beginTurn(deps: Lifecycle, store: SessionStore, input: TurnInput): TurnStart & { written: Promise<void> } {
  const { parsed, message } = input;
  const at = deps.now();
  const text = turnText(input);
  const policy = policyFor(deps, parsed, message?.channel, input.isThread);
  let result: Omit<TurnStart, "entry"> | undefined;
  const { entry, written } = store.patchNow(parsed.key, (current) => {
    const reason = turnReason(current, input.reset, policy, at);
    const isNew = reason !== "continued";
    result = { isNew, reason, policy, ...text, ...(isNew && current && { previousSessionId: current.sessionId }) };
    const base: SessionEntryPatch = isNew
      ? { ...omit(current, CLEARED_ON_NEW_SESSION), ...freshSessionFields(parsed, deps.newSessionId(), at) }
      : { updatedAt: at };
    const model = text.model ? { providerOverride: text.model.provider, modelOverride: text.model.model } : {};
    const metadata = message ? inboundMetadataPatch(message, isNew ? undefined : current) : {};
    return { ...base, ...model, ...metadata };
  });
  return { entry: entry!, ...result!, written };
}

/** An isolated cron or hook run: always a new sessionId, carrying the fields listed in docs/sessions.md. */
async function startIsolatedRun(deps: Lifecycle, store: SessionStore, parsed: ParsedSessionKey): Promise<SessionEntry> {
  const at = deps.now();
  const entry = await store.patch(parsed.key, (current) => {
    const kept = pick(current, KEPT_BY_ISOLATED_RUN);
    const dropped = omit(
      current,
      Object.keys(current ?? {}).filter((f) => !(f in kept)),
    );
    return { ...dropped, ...kept, ...freshSessionFields(parsed, deps.newSessionId(), at) };
  });
  return entry!;
}

/** Reset policy, freshness and resets, evaluated when a message arrives (docs/sessions.md). */
export function createSessionLifecycle(options: LifecycleDeps) {
  const deps: Lifecycle = {
    ...options,
    now: options.now ?? Date.now,
    newSessionId: options.newSessionId ?? randomUUID,
  };
  return {
    policyFor: (parsed: ParsedSessionKey, channel: string | undefined, isThread?: boolean) =>
      policyFor(deps, parsed, channel, isThread),
    beginTurn: (store: SessionStore, input: TurnInput) => beginTurn(deps, store, input),

    /** Freshness of a stored entry right now (for /status and listings). */
    freshness(entry: SessionEntry, parsed: ParsedSessionKey, isThread?: boolean): Freshness {
      const policy = policyFor(deps, parsed, entry.lastChannel ?? entry.channel, isThread);
      return evaluateFreshness(entry.updatedAt, policy, deps.now());
    },

    /** {@link beginTurn}, settling once its store patch is durable. */
    async startTurn(store: SessionStore, input: TurnInput): Promise<TurnStart> {
      const { written, ...turn } = beginTurn(deps, store, input);
      await written;
      return turn;
    },

    /**
     * Records a message's origin and last route on an existing entry without starting a turn:
     * `updatedAt` stays, so a stale session still resets on its next turn. Missing entry, or
     * nothing new (the usual case: the same chat as last time): nothing is written.
     */
    recordMetadata: (store: SessionStore, parsed: ParsedSessionKey, message: InboundMessage) =>
      store.patch(parsed.key, (current) => {
        const patch = current && inboundMetadataPatch(message, current);
        return patch && changesEntry(current, patch) ? patch : undefined;
      }),

    startIsolatedRun: (store: SessionStore, parsed: ParsedSessionKey) => startIsolatedRun(deps, store, parsed),
  };
}
