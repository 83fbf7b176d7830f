// Scripts that tests run as child processes (crash tests start and SIGKILL them dozens of times)
// start from an esbuild bundle instead of compiling TypeScript through tsx at every start: the
// same code, a second or more less per start on this machine. One bundle per script and test
// process, beside node_modules so packages resolve as from the sources; removed when the process exits.
import { randomUUID } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { type Plugin, build } from "esbuild";
import { processAlive } from "../../src/state/process-alive.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
// Unique per worker: vitest workers may be threads of one process.
const OUT = path.join(ROOT, "node_modules", ".cache", "sb-test-scripts", `${process.pid}-${randomUUID().slice(0, 8)}`);
const bundles = new Map<string, Promise<string>>();
let exitHook = false;

/** `import.meta.dirname` as the module's own folder in the sources (web assets are found from it). */
const ownDirname = (outDir: string): Plugin => ({
  name: "own-dirname",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta.dirname")) return undefined;
      const relative = path.relative(outDir, path.dirname(args.path)).split(path.sep).join("/");
      return {
        contents: source.replaceAll("import.meta.dirname", `(import.meta.dirname + "/${relative}")`),
        loader: "ts",
      };
    });
  },
});

/** Removes the bundles of test processes that are gone (a worker that was killed never ran its exit hook). */
function removeDeadBundles(): void {
  const parent = path.dirname(OUT);
  let names: string[] = [];
  try {
    names = readdirSync(parent);
  } catch {
    return; // nothing built yet
  }
  for (const name of names) {
    const pid = Number(name.split("-")[0]);
    if (pid !== process.pid && !processAlive(pid)) rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

/** The bundle of the TypeScript script `file` (absolute path), built once per test process: run it with plain `node`. */
export function compiledScript(file: string): Promise<string> {
  let bundle = bundles.get(file);
  if (!bundle) {
    if (!exitHook) {
      exitHook = true;
      removeDeadBundles();
      process.once("exit", () => rmSync(OUT, { recursive: true, force: true }));
    }
    const outDir = path.join(OUT, String(bundles.size));
    const outfile = path.join(outDir, `${path.basename(file, ".ts")}.mjs`);
    bundle = build({
      entryPoints: [file],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      logLevel: "warning",
      plugins: [ownDirname(outDir)],
    }).then(() => outfile);
    bundles.set(file, bundle);
  }
  return bundle;
}
