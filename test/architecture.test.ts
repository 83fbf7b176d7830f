import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LAYERS, boundaryViolations, layerOf, sourceFiles } from "./support/import-graph.js";

const root = path.resolve(import.meta.dirname, "..");

function tree(): Map<string, string> {
  const files = [...sourceFiles(root, "src"), ...sourceFiles(root, "adapters")];
  return new Map(files.map((file) => [file, readFileSync(path.join(root, file), "utf8")]));
}

describe("architecture", () => {
  it("keeps src/ free of adapters and platform SDKs, and every import pointing down a layer", () => {
    const files = tree();
    expect(files.size).toBeGreaterThan(0);
    expect(boundaryViolations(files)).toEqual([]);
  });

  it("puts every src/ folder in a layer of ARCHITECTURE.md", () => {
    const folders = new Set(
      [...tree().keys()].map(layerOf).filter((l) => l && !l.startsWith("src-") && l !== "adapters"),
    );
    for (const folder of folders) expect(LAYERS).toContain(folder);
  });
});

describe("boundaryViolations", () => {
  it("reports a lower layer importing a higher one", () => {
    const files = new Map([["src/routing/x.ts", 'import { runCli } from "../cli/main.js";']]);
    expect(boundaryViolations(files)).toEqual([
      `src/routing/x.ts: layer routing imports higher layer cli ("../cli/main.js")`,
    ]);
  });

  it("reports src/ importing a platform SDK or an adapter", () => {
    const files = new Map([
      ["src/inbound/a.ts", 'import { Bot } from "grammy";\nimport type { X } from "../../adapters/telegram/index.js";'],
      ["src/agents/b.ts", 'const m = await import("discord.js");'],
    ]);
    expect(boundaryViolations(files)).toEqual([
      'src/inbound/a.ts: imports platform SDK "grammy" (only adapters/ may)',
      'src/inbound/a.ts: imports adapter code "../../adapters/telegram/index.js"',
      'src/agents/b.ts: imports platform SDK "discord.js" (only adapters/ may)',
    ]);
  });

  it("reports an adapter reaching past the core's public index", () => {
    const files = new Map([
      [
        "adapters/telegram/bot.ts",
        'import { Bot } from "grammy";\nimport { x } from "../../src/routing/index.js";\nimport { y } from "../../src/index.js";',
      ],
    ]);
    expect(boundaryViolations(files)).toEqual([
      'adapters/telegram/bot.ts: imports "../../src/routing/index.js"; adapters import only src/index.ts',
    ]);
  });

  it("allows imports to the same or a lower layer and to src/errors.ts", () => {
    const files = new Map([
      [
        "src/cli/main.ts",
        'import { a } from "../config/index.js";\nimport { b } from "./cli-io.js";\nimport { c } from "../errors.js";',
      ],
      ["src/config/load.ts", 'import { SwitchboardError } from "../errors.js";'],
    ]);
    expect(boundaryViolations(files)).toEqual([]);
  });
});
