import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** Layers of ARCHITECTURE.md, highest first; imports may only point to the same layer or a lower one. */
export const LAYERS = [
  "cli",
  "gateway",
  "hooks",
  "cron",
  "inbound",
  "commands",
  "tools",
  "agents",
  "delivery",
  "sessions",
  "routing",
  "config",
] as const;

/** Platform SDKs only adapters may import. */
export const PLATFORM_SDKS = ["grammy", "discord.js", "baileys", "@whiskeysockets/baileys", "@grammyjs/"];

/** One import found in a source file. */
export interface ImportEdge {
  file: string;
  specifier: string;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** Every import specifier in `text`. */
export function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** All .ts files under `dir` (relative to `root`), recursively. */
export function sourceFiles(root: string, dir: string): string[] {
  const full = path.join(root, dir);
  let names: string[];
  try {
    names = readdirSync(full);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) return sourceFiles(root, rel);
    return rel.endsWith(".ts") ? [rel] : [];
  });
}

/** The layer of a repository-relative path: a LAYERS name, "adapters", "src-base" (errors, logger), "src-index" or undefined. */
export function layerOf(rel: string): string | undefined {
  const parts = rel.split(path.sep);
  if (parts[0] === "adapters") return "adapters";
  if (parts[0] !== "src") return undefined;
  if (parts.length === 2)
    return ["errors", "logger"].includes(parts[1]!.replace(/\.[jt]s$/, "")) ? "src-base" : "src-index";
  return parts[1];
}

function rank(layer: string | undefined): number {
  if (layer === "src-base") return LAYERS.length; // below config: shared by every layer
  return LAYERS.indexOf(layer as (typeof LAYERS)[number]);
}

/** Every rule a file's imports break, as readable lines. `files` maps relative path -> source text. */
export function boundaryViolations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of files) {
    const from = layerOf(file);
    for (const specifier of importsOf(text)) {
      const isSdk = PLATFORM_SDKS.some(
        (sdk) => specifier === sdk || specifier.startsWith(sdk.endsWith("/") ? sdk : `${sdk}/`),
      );
      if (from !== "adapters" && isSdk)
        problems.push(`${file}: imports platform SDK "${specifier}" (only adapters/ may)`);
      if (!specifier.startsWith(".")) continue;
      const target = path.normalize(path.join(path.dirname(file), specifier));
      const to = layerOf(target);
      if (from === "adapters") {
        if (to !== "adapters" && to !== "src-index")
          problems.push(`${file}: imports "${specifier}"; adapters import only src/index.ts`);
        continue;
      }
      if (to === "adapters") {
        problems.push(`${file}: imports adapter code "${specifier}"`);
        continue;
      }
      if (from === "src-index" || from === undefined || to === undefined) continue;
      if (to === "src-index")
        problems.push(`${file}: imports the public index "${specifier}"; import the module itself`);
      else if (rank(to) < rank(from))
        problems.push(`${file}: layer ${from} imports higher layer ${to} ("${specifier}")`);
    }
  }
  return problems;
}
