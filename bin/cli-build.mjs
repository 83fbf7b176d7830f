// The CLI's build: one esbuild bundle of bin/entry.ts in dist/ (packages stay in node_modules), so a
// command starts without compiling TypeScript. `npm ci` runs it (the `prepare` script); bin/switchboard
// uses dist/ only while every source it was built from is unchanged, and the sources (tsx) otherwise.
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";

const ROOT = path.resolve(import.meta.dirname, "..");
const STAMP = "inputs.json";

/** True when `outDir` holds a build whose every input still has the size and time it was built from. */
export function isBuildFresh(outDir = path.join(ROOT, "dist"), root = ROOT) {
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(path.join(outDir, STAMP), "utf8"));
  } catch {
    return false; // no build (or a torn one): run the sources
  }
  for (const [file, [size, mtimeMs]] of Object.entries(inputs)) {
    try {
      const stat = statSync(path.join(root, file));
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
    } catch {
      return false; // an input was removed
    }
  }
  return true;
}

// Our sources as the bundle needs them. A bundle moves every module into outDir: each file gets its
// own directory back, so `path.resolve(import.meta.dirname, "../../web")` finds the same folder as from
// the sources. And zod comes in as a namespace import of its API: `import { z } from "zod"` makes all
// of zod one object, kept whole, where `import * as z` lets esbuild keep only the parts used.
const sourceRewrites = (outDir, root) => ({
  name: "source-rewrites",
  setup(build) {
    const zodApi = path.join(root, "node_modules/zod/v4/classic/external.js");
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const relative = path.relative(outDir, path.dirname(args.path)).split(path.sep).join("/");
      const contents = source
        .replaceAll("import.meta.dirname", `(import.meta.dirname + "/${relative}")`)
        .replaceAll('import { z } from "zod";', `import * as z from ${JSON.stringify(zodApi)};`);
      return contents === source ? undefined : { contents, loader: "ts" };
    });
  },
});

// Bundled with our code: what every command loads (one file instead of hundreds to resolve and read).
// Every other package stays in node_modules and loads only in the command that needs it.
const INLINE = new Set(["commander", "zod", "json5", "lowdb", "steno"]);

// zod's namespaces carry every locale's messages (about half of zod's code); the project's messages are
// English, so the build gives zod its English locale only and a start reads half as much of zod.
const zodEnglishOnly = (root) => ({
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
        ? { path: "zod-locales", namespace: "zod-en" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-en" }, () => ({
      contents: 'export { default as en } from "zod/v4/locales/en.js";',
      resolveDir: root,
    }));
  },
});

// What each config section is when the file leaves it out, computed once here from the sources' own
// schema: the build then needs no schema for a section a config does not have (src/config/schema/sections.ts).
async function sectionDefaults(build, root, staging) {
  const probe = path.join(staging, "section-defaults.mjs");
  await build({
    absWorkingDir: root,
    stdin: { contents: 'export { ConfigSchema } from "./src/config/schema/index.ts";', resolveDir: root, loader: "ts" },
    outfile: probe,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: externals(root),
    logLevel: "warning",
  });
  const { ConfigSchema } = await import(pathToFileURL(probe).href);
  rmSync(probe);
  const defaults = ConfigSchema.parse({});
  // Written into the bundle as JSON: a default that JSON cannot carry would come out different.
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(defaults)), defaults))
    throw new Error("a config default does not survive JSON (src/config/schema/built-defaults.ts)");
  return defaults;
}

const builtDefaults = (defaults) => ({
  name: "built-section-defaults",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]config[\\/]schema[\\/]built-defaults\.ts$/ }, () => ({
      contents: `export const BUILT_SECTION_DEFAULTS = ${JSON.stringify(defaults)};`,
      loader: "js",
    }));
  },
});

function externals(root) {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((name) => !INLINE.has(name));
  return names.flatMap((name) => [name, `${name}/*`]);
}

/** Builds bin/entry.ts into `outDir` (written beside it, then renamed over it, so a reader never sees half). */
export async function buildCli(outDir = path.join(ROOT, "dist"), root = ROOT) {
  const { build } = await import("esbuild");
  const staging = `${outDir}.building-${process.pid}`;
  const defaults = await sectionDefaults(build, root, staging);
  const result = await build({
    absWorkingDir: root,
    entryPoints: [path.join(root, "bin/entry.ts")],
    outdir: staging,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Less to read at each start; names are kept, so stack traces still name our functions.
    minifyWhitespace: true,
    minifySyntax: true,
    external: externals(root),
    // commander is CommonJS: its require() of Node's modules needs a require in an ES module.
    banner: {
      js: 'import { createRequire as __sbRequire } from "node:module"; const require = __sbRequire(import.meta.url);',
    },
    metafile: true,
    logLevel: "warning",
    plugins: [builtDefaults(defaults), sourceRewrites(outDir, root), zodEnglishOnly(root)],
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    if (file.startsWith("zod-en:")) continue; // made by the plugin above, not a file
    const stat = statSync(path.join(root, file));
    inputs[file] = [stat.size, stat.mtimeMs];
  }
  writeFileSync(path.join(staging, STAMP), JSON.stringify(inputs));
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
}

if (process.argv[1] === import.meta.filename) {
  try {
    await buildCli();
  } catch (error) {
    // Never fail `npm ci` for this: without a build the CLI runs from the sources, only slower to start.
    console.warn(`switchboard: CLI not built (${error.message}); bin/switchboard runs from the sources`);
  }
}
