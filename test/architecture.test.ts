import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LAYERS, boundaryViolations, importCycles, layerOf, sourceFiles } from "./support/import-graph.js";

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

  it("has no import circle anywhere in src/ or adapters/, inside a layer or across layers", () => {
    expect(importCycles(tree())).toEqual([]);
  });

  it("never branches on a channel's name in src/: the core reads the adapter's capabilities instead", () => {
    const byName =
      /(?:===|!==)\s*"(?:telegram|discord|whatsapp|webchat)"|"(?:telegram|discord|whatsapp|webchat)"\s*(?:===|!==)|case\s+"(?:telegram|discord|whatsapp|webchat)"/;
    const srcFiles = [...tree()].filter(([file]) => file.startsWith("src/"));
    expect(srcFiles.length).toBeGreaterThan(0);
    const branching = srcFiles.filter(([, text]) => byName.test(text)).map(([file]) => file);
    expect(branching).toEqual([]);
    // The pattern itself catches what it is for.
    expect(byName.test('if (target.channel === "webchat") return;')).toBe(true);
  });

  it("keeps every file in src/ and adapters/ at 300 lines or fewer (small rooms)", () => {
    const lines = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    const files = [...tree()];
    expect(files.length).toBeGreaterThan(0);
    const large = files.filter(([, text]) => lines(text) > 300).map(([file, text]) => `${file}: ${lines(text)} lines`);
    expect(large).toEqual([]);
    // The count itself: 301 lines is over, 300 is not.
    expect(lines("x\n".repeat(301)) > 300 && !(lines("x\n".repeat(300)) > 300)).toBe(true);
  });

  it("puts every src/ folder in a layer of docs/architecture.md", () => {
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

describe("importCycles", () => {
  it("reports two files that import each other, and a longer loop inside one layer", () => {
    const files = new Map([
      ["src/gateway/server.ts", 'import { handle } from "./routes.js";'],
      ["src/gateway/routes.ts", 'import type { Server } from "./server.js";'],
      ["src/commands/a.ts", 'import { b } from "./b.js";'],
      ["src/commands/b.ts", 'import { c } from "./handlers/c.js";'],
      ["src/commands/handlers/c.ts", 'import type { A } from "../a.js";\nimport { z } from "zod";'],
      ["src/commands/d.ts", 'import { a } from "./a.js";'],
    ]);
    expect(importCycles(files)).toEqual([
      "import circle: src/commands/a.ts -> src/commands/b.ts -> src/commands/handlers/c.ts -> src/commands/a.ts",
      "import circle: src/gateway/routes.ts -> src/gateway/server.ts -> src/gateway/routes.ts",
    ]);
  });

  it("accepts a graph where imports only point one way, and a file importing itself is no circle", () => {
    const files = new Map([
      ["src/cli/main.ts", 'import { io } from "./cli-io.js";\nimport { g } from "./gateway-command.js";'],
      ["src/cli/gateway-command.ts", 'import { io } from "./cli-io.js";'],
      ["src/cli/cli-io.ts", 'export const io = 1;\nimport { x } from "./cli-io.js";'],
    ]);
    expect(importCycles(files)).toEqual([]);
  });
});
