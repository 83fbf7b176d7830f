import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** Layers of docs/architecture.md, highest first; imports may only point to the same layer or a lower one. */
export const LAYERS = [
  "cli",
  "import",
  "migrate",
  "gateway",
  "hooks",
  "cron",
  "inbound",
  "commands",
  "tools",
  "agents",
  "delivery",
  "sessions",
  "workspace",
  "cluster",
  "state",
  "routing",
  "config",
] as const;

/** Platform SDKs only adapters may import. */
const PLATFORM_SDKS = ["grammy", "discord.js", "baileys", "@whiskeysockets/baileys", "@grammyjs/"];

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** Every import specifier in `text`. */
function importsOf(text: string): string[] {
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
  if (parts[1] === "errors") return "src-base"; // src/errors/: the catalogue, classes and edges behind src/errors.ts
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

/** The repository-relative file a relative `specifier` in `file` names (`./x.js` -> `dir/x.ts`), or undefined for packages. */
function resolveImport(file: string, specifier: string, files: ReadonlyMap<string, string>): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = path.normalize(path.join(path.dirname(file), specifier));
  for (const candidate of [target.replace(/\.js$/, ".ts"), target, `${target}.ts`, path.join(target, "index.ts")])
    if (files.has(candidate)) return candidate;
  return undefined;
}

/**
 * Every import circle among `files` (relative path -> source text), as readable lines: each group of files
 * that reach each other through imports (a strongly connected component), sorted, with one loop through it.
 * Type-only imports count too: a circle of types still ties the modules' designs together.
 */
export function importCycles(files: ReadonlyMap<string, string>): string[] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of files)
    edges.set(
      file,
      [...new Set(importsOf(text).map((s) => resolveImport(file, s, files)))].filter(
        (t): t is string => t !== undefined && t !== file,
      ),
    );
  // Tarjan's strongly connected components, iterative so deep graphs cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = edges.get(top.node)!;
      if (top.i < out.length) {
        const to = out[top.i++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          group.push(member);
        } while (member !== top.node);
        if (group.length > 1) groups.push(group.sort());
      }
    }
  }
  return groups
    .sort((a, b) => a[0]!.localeCompare(b[0]!))
    .map((group) => `import circle: ${loopThrough(group, edges).join(" -> ")}`);
}

/** One loop from the group's first file back to itself, following imports inside the group (breadth first). */
function loopThrough(group: string[], edges: ReadonlyMap<string, string[]>): string[] {
  const inGroup = new Set(group);
  const start = group[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of edges.get(node) ?? []) {
      if (!inGroup.has(to)) continue;
      if (to === start) {
        const loop = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at))
          loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return group;
}
