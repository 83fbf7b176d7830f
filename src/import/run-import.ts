import { access, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { type Config, parseConfig, resolveStorePath } from "../config/index.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { createSessionStore } from "../sessions/session-store.js";
import { openLocalState } from "../state/local-state.js";
import { checkedConfig } from "./check-config.js";
import { copyTranscript } from "./copy-transcript.js";
import { type ImportReport, emptyReport } from "./import-report.js";
import { importRows, readSourceStore } from "./import-store.js";
import { mapClawdbotConfig } from "./map-config.js";
import { type SourceAgent, looksLikeSourceHome, readPairedIds, readSourceConfig, sourceAgents } from "./source-home.js";

/** What {@link runImport} needs. */
export interface ImportInput {
  /** the source home (`~/.clawdbot`); only read */
  source: string;
  /** the Switchboard home written */
  home: string;
  /** where the config goes (`$SWITCHBOARD_HOME/switchboard.json5`) */
  configFile: string;
  homeDir: string;
  /** add to a home that already has state instead of refusing */
  merge: boolean;
  logger: Logger;
  /** called as work is done: steps done so far, of `total` */
  progress?: (done: number, total: number) => void;
}

/** Source and target counts, per kind of thing imported. */
interface Count {
  source: number;
  imported: number;
  /** found in the target when it was opened again afterwards */
  inTarget: number;
}

/** What an import did. */
export interface ImportResult {
  report: ImportReport;
  sessions: Count;
  transcripts: Count;
  /** where the mapped config was written */
  configWritten: string;
  /** every count matched: everything imported is in the target */
  countsMatch: boolean;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** Refuses a target that has state unless `merge`: an import never mixes two histories by surprise. */
async function checkTarget(input: ImportInput): Promise<void> {
  const found = [];
  if (await exists(input.configFile)) found.push(input.configFile);
  for (const dir of ["agents", "state"]) {
    const names = await readdir(path.join(input.home, dir)).catch(() => [] as string[]);
    if (names.length > 0) found.push(path.join(input.home, dir));
  }
  if (found.length > 0 && !input.merge)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `${input.home} already has state (${found.join(", ")}); import into an empty SWITCHBOARD_HOME, or pass --merge to add the sessions it does not have yet (its config is then written beside yours as .imported)`,
    );
}

async function writeConfig(input: ImportInput, config: Record<string, unknown>, report: ImportReport): Promise<string> {
  const text = `// Imported from ${input.source} by \`switchboard import clawdbot\`.\n${JSON.stringify(config, null, 2)}\n`;
  await mkdir(path.dirname(input.configFile), { recursive: true });
  if (!(await exists(input.configFile))) {
    await writeFile(input.configFile, text, { flag: "wx" });
    return input.configFile;
  }
  const beside = `${input.configFile}.imported`;
  await writeFile(beside, text);
  report.notes.push({
    where: input.configFile,
    reason: `kept as it was; the imported config is in ${beside} to merge by hand`,
  });
  return beside;
}

/** One agent: rows into its store, then every transcript file next to it. */
async function importAgent(
  agent: SourceAgent,
  config: Config,
  input: ImportInput,
  state: ReturnType<typeof openLocalState>,
  step: () => void,
  report: ImportReport,
) {
  const storePath = resolveStorePath(input.home, agent.agentId, config.session.store, input.homeDir);
  await mkdir(path.dirname(storePath), { recursive: true });
  const keys = { defaultAgentId: agent.agentId, mainKey: config.session.mainKey, scope: config.session.scope };
  const store = await createSessionStore({ state, path: storePath, keys, logger: input.logger });
  const storeFile = path.join(agent.dir, "sessions.json");
  const raw = await readSourceStore(storeFile, report);
  const keysWritten = raw ? await importRows(raw, store, keys, storeFile, report) : [];
  await store.close();
  step();
  const copied: string[] = [];
  for (const name of agent.transcripts) {
    const done = await copyTranscript(path.join(agent.dir, name), path.join(path.dirname(storePath), name), report);
    if (done) copied.push(name);
    step();
  }
  return { storePath, keys, keysWritten, rows: raw ? Object.keys(raw).length : 0, copied };
}

/**
 * `switchboard import clawdbot <dir>`: reads a home of the system we re-implement (never writing
 * to it) and writes a Switchboard home: the mapped config, every agent's sessions and transcripts.
 * Ends with a count check on the target opened again, and a report of what it could not map.
 */
export async function runImport(input: ImportInput): Promise<ImportResult> {
  if (!(await looksLikeSourceHome(input.source)))
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `${input.source} is not a Clawdbot home (no clawdbot.json, moltbot.json, openclaw.json, agents/ or sessions/ in it); pass the folder that holds them, e.g. ~/.clawdbot`,
    );
  await checkTarget(input);
  const report = emptyReport();
  const raw = await readSourceConfig(input.source, report);
  const mapped = checkedConfig(mapClawdbotConfig(raw, await readPairedIds(input.source, report), report), report);
  const configWritten = await writeConfig(input, mapped, report);
  const { config } = parseConfig(mapped);
  const agents = await sourceAgents(input.source);
  const total = agents.reduce((n, a) => n + 1 + a.transcripts.length, 0);
  let done = 0;
  const step = () => input.progress?.(++done, total);
  const state = openLocalState({ dir: path.join(input.home, "state"), logger: input.logger });
  const results = [];
  try {
    for (const agent of agents) results.push(await importAgent(agent, config, input, state, step, report));
  } finally {
    await state.close();
  }
  const check = await countCheck(input, results);
  const sessions = { source: results.reduce((n, r) => n + r.rows, 0), imported: check.rows, inTarget: check.rowsFound };
  const transcripts = {
    source: agents.reduce((n, a) => n + a.transcripts.length, 0),
    imported: check.files,
    inTarget: check.filesFound,
  };
  return {
    report,
    sessions,
    transcripts,
    configWritten,
    countsMatch: check.rows === check.rowsFound && check.files === check.filesFound,
  };
}

/** Opens the target again, read-only, and counts what the import wrote that is there. */
async function countCheck(
  input: ImportInput,
  results: Array<{
    storePath: string;
    keys: { defaultAgentId: string; mainKey: string; scope: Config["session"]["scope"] };
    keysWritten: string[];
    copied: string[];
  }>,
) {
  const state = openLocalState({ dir: path.join(input.home, "state"), logger: input.logger, readOnly: true });
  let rowsFound = 0;
  let filesFound = 0;
  for (const result of results) {
    const store = await createSessionStore({ state, path: result.storePath, keys: result.keys, logger: input.logger });
    rowsFound += result.keysWritten.filter((key) => store.get(key) !== undefined).length;
    for (const name of result.copied) if (await exists(path.join(path.dirname(result.storePath), name))) filesFound++;
  }
  await state.close();
  return {
    rows: results.reduce((n, r) => n + r.keysWritten.length, 0),
    rowsFound,
    files: results.reduce((n, r) => n + r.copied.length, 0),
    filesFound,
  };
}
