// The durable record of a run's tool calls: what each call returned, on disk before the model sees
// it, so a turn replayed after a crash is answered from here instead of acting again.
import { createHash } from "node:crypto";
import { z } from "zod";
import type { StatePort, StateTable } from "../state/state-port.js";
import { checkWith } from "../state/schema-check.js";

/** What a finished call gave the model: its output, or the error it was told. */
const OutcomeSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), output: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
/** A recorded call's outcome. */
export type ToolCallOutcome = z.infer<typeof OutcomeSchema>;

/** One finished tool call of a run, under its call id. */
const ToolCallRowSchema = z.object({
  runId: z.string().min(1),
  /** the session the run is a turn of (its rows' partition); absent in rows of earlier versions */
  sessionKey: z.string().min(1).optional(),
  name: z.string().min(1),
  /** sha256 of the call's input as canonical JSON: a replay that asks something else at this position is not answered from here */
  input: z.string(),
  outcome: OutcomeSchema,
  at: z.number(),
});
type ToolCallRow = z.infer<typeof ToolCallRowSchema>;

/** Rows of runs whose end this process did not see (a failed turn, a crash) are kept this long, as the inbox keeps its dedupe memory. */
export const TOOL_RECORD_KEEP_MS = 7 * 24 * 3_600_000;
/** Rows of a run that ended without handing a reply over are kept this long: its message is marked done by then. */
export const ENDED_KEEP_MS = 60_000;
const SWEEP_EVERY_MS = 60_000;

/** Where a call stands in the record: its call id, and its outcome when it already ran. */
export interface ToolCallSlot {
  callId: string;
  recorded?: ToolCallOutcome;
}

/** A finished call as the record keeps it: its run, the run's session, the tool, its input and outcome. */
interface RecordedCall {
  runId: string;
  sessionKey: string;
  name: string;
  input: unknown;
  outcome: ToolCallOutcome;
}

/** Dependencies of {@link openToolRecord}. */
export interface ToolRecordDeps {
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/tool-calls.json` */
  path: string;
  now?: () => number;
}

/** JSON with object keys sorted, so equal inputs hash alike whatever order a model wrote them in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const inputHash = (input: unknown) => createHash("sha256").update(canonical(input)).digest("hex");

/**
 * The call at `position` of run `runId`. Its id is `<runId>:<position>`; when the record holds a
 * different call there (a replayed model chose otherwise), the next free `<runId>:<position>~<n>`,
 * so a different call never borrows the id a receiving side dedupes by.
 */
function slotOf(rows: StateTable<ToolCallRow>, runId: string, position: number, name: string, input: unknown) {
  const hash = inputHash(input);
  for (let attempt = 1; ; attempt++) {
    const callId = attempt === 1 ? `${runId}:${position}` : `${runId}:${position}~${attempt}`;
    const row = rows.get(callId);
    if (!row) return { callId, hash };
    if (row.name === name && row.input === hash) return { callId, hash, recorded: row.outcome };
  }
}

/** The output as storage keeps it (JSON), which is also what the model is given on a replay. */
const asStored = (outcome: ToolCallOutcome): ToolCallOutcome =>
  outcome.ok && outcome.output !== undefined
    ? { ok: true, output: JSON.parse(JSON.stringify(outcome.output)) }
    : outcome;

/** The record's table on the port; `evicted` is told the rows of partitions the port gives up. */
function openRows(
  deps: ToolRecordDeps,
  evicted: (rows: ReadonlyArray<readonly [string, ToolCallRow]>) => void,
): Promise<StateTable<ToolCallRow>> {
  return deps.state.table<ToolCallRow>({
    name: "tool-calls",
    path: deps.path,
    what: "tool-call record",
    keyField: "callId",
    invalidRows: "drop",
    sessionOf: (_callId, row) => row.sessionKey,
    check: checkWith(ToolCallRowSchema),
    // Adopted rows need no index: a replay finds them by call id in the image.
    onEvict: evicted,
  });
}

/** What leaves the record when: a run's rows at once, a minute after its end, or after {@link TOOL_RECORD_KEEP_MS}. */
function pruner(rows: StateTable<ToolCallRow>, now: () => number, ended: EndedRuns) {
  let sweptAt = 0;
  const drop = (keep: (row: ToolCallRow) => boolean): Promise<unknown> =>
    Promise.all([...rows.entries()].filter(([, row]) => !keep(row)).map(([key]) => rows.delete(key)));
  const sweep = () => {
    sweptAt = now();
    const done = new Set([...ended].filter(([, at]) => at <= sweptAt - ENDED_KEEP_MS).map(([runId]) => runId));
    for (const runId of done) ended.delete(runId);
    return drop((row) => row.at > sweptAt - TOOL_RECORD_KEEP_MS && !done.has(row.runId));
  };
  const sweepSoon = () => (now() - sweptAt >= SWEEP_EVERY_MS ? sweep() : undefined);
  return {
    sweep,
    forget: async (runId: string) => {
      await drop((row) => row.runId !== runId);
      await sweepSoon();
    },
    ended: async (runId: string) => {
      ended.set(runId, now());
      await sweepSoon();
    },
  };
}

/** Runs that ended in this process without a reply handed over, and when. */
type EndedRuns = Map<string, number>;

/**
 * Opens the tool-call record on the state port. `slot` finds a call's id and recorded outcome,
 * `put` records an outcome (settling once it is durable), `forget` and `ended` drop a run's rows once
 * a replay can no longer run it; rows older than {@link TOOL_RECORD_KEEP_MS} are swept at open and
 * with those, at most once a minute.
 */
export async function openToolRecord(deps: ToolRecordDeps) {
  const now = deps.now ?? Date.now;
  const ended: EndedRuns = new Map();
  // A run of a partition given up is the next holder's: its end here no longer drops its rows (they may come back).
  const rows = await openRows(deps, (evicted) => {
    for (const [, row] of evicted) ended.delete(row.runId);
  });
  const prune = pruner(rows, now, ended);
  if (!deps.state.readOnly) await prune.sweep();
  return {
    /** The id of the call at `position` of `runId` and, when it ran before, what it gave. */
    slot(runId: string, position: number, name: string, input: unknown): ToolCallSlot {
      const { callId, recorded } = slotOf(rows, runId, position, name, input);
      return recorded ? { callId, recorded } : { callId };
    },
    /** Records what call `callId` gave; settles once that is durable. */
    put(callId: string, call: RecordedCall) {
      const { runId, sessionKey, name } = call;
      const row = { runId, sessionKey, name, input: inputHash(call.input), outcome: asStored(call.outcome) };
      return rows.set(callId, { ...row, at: now() });
    },
    /** Drops the rows of `runId` now: its reply is in the outbox, so a replay only marks its message done. */
    forget: (runId: string): Promise<void> => prune.forget(runId),
    /** `runId` ended without a reply handed over: its rows go {@link ENDED_KEEP_MS} later, once its message is surely marked done. */
    ended: (runId: string): Promise<void> => prune.ended(runId),
    /** Writes the table in full (at a stop, after the last turn). */
    close: (): Promise<void> => rows.close(),
    /** Number of recorded calls (tests). */
    get size(): number {
      return rows.size;
    },
  };
}

/** The tool-call record. */
export type ToolRecord = Awaited<ReturnType<typeof openToolRecord>>;
