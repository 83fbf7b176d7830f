/**
 * Moves a home between backends, generic over the ports: every state table the source holds is
 * copied row by row through the state port, every transcript and archive through the transcripts port,
 * every workspace file through the workspace port. The target must be empty; the result carries
 * the counts of both sides, read back after the copy.
 */
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { AppendOptions, Transcripts } from "../sessions/transcripts/transcripts-port.js";
import { rawTableSpec } from "./home-tables.js";
import type { MigrationSide } from "./migration-side.js";
import {
  type SideCounts,
  archivedTranscripts,
  countSide,
  liveTranscripts,
  readWholeTranscript,
  workspaceFiles,
} from "./side-contents.js";

/** What a migration did. */
export interface MigrationResult {
  source: SideCounts;
  target: SideCounts;
  /** true when every line of the count check is equal on both sides */
  countsMatch: boolean;
}

/** Told how many units (rows, transcripts, files) are copied of how many. */
export type MigrationProgress = (done: number, total: number) => void;

const BATCH = 500;

/** Copies state table `name`, in the source's row order, waiting for every `BATCH` writes. */
async function copyTable(source: MigrationSide, target: MigrationSide, name: string, step: () => void) {
  const from = await source.state.table(rawTableSpec(name, source.tablePath(name)));
  const to = await target.state.table(rawTableSpec(name, target.tablePath(name)));
  const writes: Promise<void>[] = [];
  for (const [key, row] of from.entries()) {
    writes.push(to.set(key, row));
    step();
    if (writes.length >= BATCH) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  await to.close();
  await from.close();
}

/**
 * Copies an agent's archived transcripts (each appended under its transcript id and archived again
 * with its time, oldest first, so the live one of the same id comes after them), live transcripts
 * (headers and messages, in order) and workspace files.
 */
async function copyAgent(source: MigrationSide, target: MigrationSide, agentId: string, step: () => void) {
  const [from, to] = [source.transcripts(agentId), target.transcripts(agentId)];
  for (const { name, archivedAt } of await archivedTranscripts(from)) {
    const id = name.slice(0, name.indexOf(".jsonl."));
    const header = await readHeaderOf(from, name);
    for (const message of await readWholeTranscript(from, name)) await to.append(id, message, header);
    await to.remove(id, { now: archivedAt });
    step();
  }
  for (const id of await liveTranscripts(from)) {
    const header = await readHeaderOf(from, id);
    for (const message of await readWholeTranscript(from, id)) await to.append(id, message, header);
    step();
  }
  const [files, into] = [source.workspace(agentId), target.workspace(agentId)];
  for (const file of await workspaceFiles(files)) {
    await into.write(file, (await files.read(file)) ?? "");
    step();
  }
}

/** The header fields a copied transcript keeps (its session id, working folder and parent). */
async function readHeaderOf(transcripts: Transcripts, id: string): Promise<AppendOptions> {
  const header = await transcripts.readHeader(id);
  if (!header) return {};
  return {
    sessionId: header.id,
    cwd: header.cwd,
    ...(header.parentSession && { parentSession: header.parentSession }),
  };
}

/** Units of work in `counts`: rows, transcripts, archives and files (messages go with their transcript). */
function unitsOf(counts: SideCounts): number {
  return Object.entries(counts).reduce((sum, [line, n]) => (line.includes("messages ") ? sum : sum + n), 0);
}

/** Refuses a target holding anything: a migration never mixes two homes. */
function refuseNonEmpty(target: MigrationSide, held: SideCounts): void {
  const lines = Object.entries(held);
  if (lines.length === 0) return;
  const shown = lines.map(([line, n]) => `${line}: ${n}`).join(", ");
  throw new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `the target ${target.where} is not empty (${shown}); migrate into an empty schema or home (another state.postgres.schema, --url, or SWITCHBOARD_HOME), or empty it first`,
  );
}

/** Copies everything `source` holds into the empty `target`, then counts both sides again. */
export async function migrateHome(
  source: MigrationSide,
  target: MigrationSide,
  progress: MigrationProgress = () => undefined,
): Promise<MigrationResult> {
  const tables = await source.tables();
  const agents = await source.agents();
  const targetAgents = [...new Set([...agents, ...(await target.agents())])];
  refuseNonEmpty(target, await countSide(target, [...new Set([...tables, ...(await target.tables())])], targetAgents));
  const before = await countSide(source, tables, agents);
  const total = unitsOf(before);
  let done = 0;
  const step = () => progress(++done, total);
  progress(0, total);
  for (const name of tables) await copyTable(source, target, name, step);
  for (const agentId of agents) await copyAgent(source, target, agentId, step);
  const after = await countSide(target, tables, agents);
  return { source: before, target: after, countsMatch: sameCounts(before, after) };
}

/** True when both sides have the same lines with the same numbers. */
function sameCounts(a: SideCounts, b: SideCounts): boolean {
  const lines = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...lines].every((line) => a[line] === b[line]);
}
