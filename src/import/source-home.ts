import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import JSON5 from "json5";
import { DEFAULT_AGENT_ID } from "../routing/normalize.js";
import { parseTranscriptFileName } from "../sessions/transcripts/index.js";
import { type ImportReport, isRecord } from "./import-report.js";
import type { PairedIds } from "./map-channels.js";

/** Config file names of the system, newest name first (Clawdbot, later Moltbot, now OpenClaw). */
const CONFIG_NAMES = ["openclaw.json", "moltbot.json", "clawdbot.json"];

/** One agent's sessions folder in the source home. */
export interface SourceAgent {
  agentId: string;
  dir: string;
  /** transcript files in it: current, left by resets, or set aside */
  transcripts: string[];
}

const SET_ASIDE = /\.jsonl\.(deleted|reset)\./;

async function isDir(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function transcriptsIn(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => parseTranscriptFileName(n) !== null || SET_ASIDE.test(n)).sort();
}

/** The agents of a source home: `agents/<id>/sessions/`, and the pre-agent `sessions/` folder as the default agent. */
export async function sourceAgents(source: string): Promise<SourceAgent[]> {
  const agents: SourceAgent[] = [];
  const ids = (await readdir(path.join(source, "agents")).catch(() => [] as string[])).sort();
  for (const agentId of ids) {
    const dir = path.join(source, "agents", agentId, "sessions");
    if (await isDir(dir)) agents.push({ agentId: agentId.toLowerCase(), dir, transcripts: await transcriptsIn(dir) });
  }
  const legacy = path.join(source, "sessions");
  if ((await isDir(legacy)) && !agents.some((a) => a.agentId === DEFAULT_AGENT_ID))
    agents.push({ agentId: DEFAULT_AGENT_ID, dir: legacy, transcripts: await transcriptsIn(legacy) });
  return agents;
}

/** The source's JSON5 config, or `{}` when it has none or it does not parse (reported). */
export async function readSourceConfig(source: string, report: ImportReport): Promise<Record<string, unknown>> {
  for (const name of CONFIG_NAMES) {
    const file = path.join(source, name);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      continue; // not this name
    }
    try {
      const value: unknown = JSON5.parse(text);
      if (isRecord(value)) return value;
      report.unmapped.push({ where: file, reason: "not a JSON object; no config imported" });
    } catch (err) {
      report.unmapped.push({ where: file, reason: `corrupt (${(err as Error).message}); no config imported` });
    }
    return {};
  }
  return {};
}

/** People approved by pairing, per channel (`credentials/<channel>-allowFrom.json`). */
export async function readPairedIds(source: string, report: ImportReport): Promise<PairedIds> {
  const paired: PairedIds = {};
  const dir = path.join(source, "credentials");
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const match = /^([a-z]+)-allowFrom\.json$/.exec(name);
    if (!match) continue;
    try {
      const value: unknown = JSON5.parse(await readFile(path.join(dir, name), "utf8"));
      const list = isRecord(value) && Array.isArray(value.allowFrom) ? value.allowFrom.map(String) : [];
      paired[match[1]!] = list;
    } catch (err) {
      report.unmapped.push({
        where: path.join(dir, name),
        reason: `corrupt (${(err as Error).message}); not imported`,
      });
    }
  }
  return paired;
}

/** True when `source` looks like a home of the system (a config, agents or sessions). */
export async function looksLikeSourceHome(source: string): Promise<boolean> {
  if (!(await isDir(source))) return false;
  const names = await readdir(source);
  return names.some((n) => CONFIG_NAMES.includes(n) || n === "agents" || n === "sessions");
}
