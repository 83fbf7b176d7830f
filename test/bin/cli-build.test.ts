// The CLI's build (bin/cli-build.mjs, run by npm ci's `prepare`): what it writes, when bin/switchboard
// trusts it, and that a command run from it loads no module it does not need.
import { execFile, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { buildCli, isBuildFresh } from "../../bin/cli-build.mjs";
import { tempHome } from "../support/fake-cli-io.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
// Inside the checkout, so the bundle finds node_modules as dist/ does.
const outDir = path.join(ROOT, "node_modules/.cache", `cli-build-test-${process.pid}`);
afterAll(() => rm(outDir, { recursive: true, force: true }));

// Records every file URL the process resolves (module hooks run off the main thread, so to a file).
const recordResolves = (log: string) =>
  `data:text/javascript,${encodeURIComponent(`import { register } from "node:module";
register("data:text/javascript,${encodeURIComponent(`import { appendFileSync } from "node:fs";
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }`)}");`)}`;

describe("isBuildFresh", () => {
  it("trusts a build only while every input has the size and time it was built from", async () => {
    await mkdir(path.join(ROOT, "node_modules/.cache"), { recursive: true }); // a fresh checkout has none yet
    const root = await mkdtemp(path.join(ROOT, "node_modules/.cache/fresh-"));
    try {
      const out = path.join(root, "dist");
      expect(isBuildFresh(out, root)).toBe(false); // never built
      await writeFile(path.join(root, "a.ts"), "export const a = 1;\n");
      await mkdir(out);
      const stat = statSync(path.join(root, "a.ts"));
      await writeFile(path.join(out, "inputs.json"), JSON.stringify({ "a.ts": [stat.size, stat.mtimeMs] }));
      expect(isBuildFresh(out, root)).toBe(true);
      await utimes(path.join(root, "a.ts"), new Date(), new Date(Date.now() + 5_000)); // edited (or checked out)
      expect(isBuildFresh(out, root)).toBe(false);
      await rm(path.join(root, "a.ts"));
      expect(isBuildFresh(out, root)).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("buildCli", () => {
  it("builds a CLI whose --help and status load neither the gateway, the ai SDK, the platform SDKs, pg nor tsx", async () => {
    await buildCli(outDir);
    expect(isBuildFresh(outDir)).toBe(true);
    const home = await tempHome();
    const env = { ...process.env, SWITCHBOARD_HOME: home };
    for (const command of ["--help", "status"]) {
      const log = path.join(home, `${command}.log`);
      const { stdout } = await run(
        process.execPath,
        ["--import", recordResolves(log), path.join(outDir, "entry.js"), command],
        { env },
      );
      expect(stdout).toContain(command === "--help" ? "Usage: switchboard" : "no gateway runs on");
      const loaded = await readFile(log, "utf8");
      expect(loaded).toMatch(/\/chunk-\w+\.js\n/); // the hook saw the build's own modules
      for (const heavy of [
        "/discord.js/",
        "/grammy/",
        "/baileys/",
        "/node_modules/ai/",
        "/@ai-sdk/",
        "/tsx/",
        "/ws/",
        "/pino/",
        "/node_modules/pg/",
        "start-gateway",
      ])
        expect(loaded, `${command} loaded ${heavy}`).not.toContain(heavy);
    }
  }, 120_000);

  it("starts --help without zod or the config schema, and status with zod's English messages only", async () => {
    await buildCli(outDir);
    const home = await tempHome();
    const env = { ...process.env, SWITCHBOARD_HOME: home };
    const loadedCode = async (command: string) => {
      const log = path.join(home, `${command}.code.log`);
      await run(process.execPath, ["--import", recordResolves(log), path.join(outDir, "entry.js"), command], { env });
      const files = (await readFile(log, "utf8")).split("\n").filter((url) => url.startsWith(`file://${outDir}`));
      return (await Promise.all(files.map((url) => readFile(new URL(url), "utf8")))).join("\n");
    };
    const help = await loadedCode("--help");
    expect(help).toContain("Usage"); // commander is there
    for (const marker of ["ZodObject", "ConfigSchema"]) expect(help, `--help loaded ${marker}`).not.toContain(marker);
    const status = await loadedCode("status");
    expect(status).toContain("ZodObject"); // status validates the config
    expect(status).not.toContain("Ungültige Eingabe"); // a German message of zod's: no other locale is bundled
  }, 120_000);

  it("builds the schemas of the sections a config has, no others, and reads a config as the sources do", async () => {
    await buildCli(outDir);
    const home = await tempHome();
    const env = { ...process.env, SWITCHBOARD_HOME: home };
    // whether the loaded code builds that schema (the statement the bundle makes of its definition)
    const builds = (code: string, name: string) => new RegExp(`(?:var |[,;])${name}=\\w+\\(`).test(code);
    const statusCode = async (name: string) => {
      const log = path.join(home, `${name}.log`);
      await run(process.execPath, ["--import", recordResolves(log), path.join(outDir, "entry.js"), "status"], { env });
      const files = (await readFile(log, "utf8")).split("\n").filter((url) => url.startsWith(`file://${outDir}`));
      return (await Promise.all(files.map((url) => readFile(new URL(url), "utf8")))).join("\n");
    };
    const bare = await statusCode("no-config");
    for (const schema of ["SessionConfigSchema", "GatewayConfigSchema", "AgentsConfigSchema", "TelegramConfigSchema"])
      expect(builds(bare, schema), `a home without a config built ${schema}`).toBe(false);
    await writeFile(path.join(home, "switchboard.json5"), "{ gateway: { port: 19000 }, models: { maxSteps: 3 } }");
    const some = await statusCode("gateway-only");
    expect(builds(some, "GatewayConfigSchema")).toBe(true);
    for (const schema of ["SessionConfigSchema", "AgentsConfigSchema", "TelegramConfigSchema"])
      expect(builds(some, schema), `a config of gateway and models built ${schema}`).toBe(false);
    // A channel section brings the channel table, and through it the core's index: not the whole schema.
    await writeFile(path.join(home, "switchboard.json5"), '{ channels: { telegram: { dmPolicy: "open" } } }');
    const channels = await statusCode("channels-only");
    expect(builds(channels, "TelegramConfigSchema")).toBe(true);
    for (const schema of ["GatewayConfigSchema", "AgentsConfigSchema", "McpConfigSchema"])
      expect(builds(channels, schema), `a config of one channel built ${schema}`).toBe(false);

    // The same config, and the same problems, from the build and from the sources.
    const config = `{ session: { dmScope: "per-channel-peer" }, channels: { telegram: { dmPolicy: "open" } },
      agents: { list: [{ id: "main" }] }, hooks: { enabled: true, token: "0123456789abcdef" } }`;
    const bad = `{ sesion: {}, gateway: { port: "x" }, channels: { telegram: { dmPolicy: "opn" } }, hooks: { enabled: true } }`;
    for (const text of [config, bad]) {
      await writeFile(path.join(home, "switchboard.json5"), text);
      const [fromBuild, fromSources] = await Promise.all(
        [[path.join(outDir, "entry.js")], ["--import", "tsx", path.join(ROOT, "bin/entry.ts")]].map((start) =>
          run(process.execPath, [...start, "config", "print"], { env }).catch((failed: Error) => failed),
        ),
      );
      expect(fromBuild).toMatchObject({ stdout: expect.any(String), stderr: expect.any(String) });
      const { stdout, stderr } = fromSources as { stdout: string; stderr: string };
      expect(fromBuild).toMatchObject({ stdout, stderr });
    }
  }, 120_000);

  it("serves the control UI from the built gateway: the web folder is found from dist/ as from the sources", async () => {
    const gateway = await startBuiltGateway(await tempHome());
    try {
      const page = await fetch(`http://${gateway.address}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<html");
    } finally {
      gateway.stop();
    }
  }, 60_000);

  it("asks a running gateway for status with ws required, not imported (its ESM wrapper and CommonJS lexing cost a third of the start)", async () => {
    const home = await tempHome();
    const gateway = await startBuiltGateway(home);
    try {
      const log = path.join(home, "status-live.log");
      const { stdout } = await run(
        process.execPath,
        ["--import", recordResolves(log), path.join(outDir, "entry.js"), "status"],
        { env: { ...process.env, SWITCHBOARD_HOME: home } },
      );
      expect(stdout).toMatch(/^gateway {2}pid \d+/); // answered by the gateway, not read from the files
      // A require() is not an ES module resolution: ws never reaches the hook; `import("ws")` resolves ws/wrapper.mjs.
      expect(await readFile(log, "utf8")).not.toContain("/ws/");
    } finally {
      gateway.stop();
    }
  }, 60_000);
});

/** The built CLI's gateway in `home`, on a free port, once it listens. */
async function startBuiltGateway(home: string) {
  const child = spawn(process.execPath, [path.join(outDir, "entry.js"), "gateway", "run", "--port", "0"], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  try {
    await expect.poll(() => /listening on ws:\/\/(\S+)/.exec(output)?.[1], { timeout: 30_000 }).toBeTruthy();
  } catch (error) {
    child.kill("SIGTERM");
    throw error;
  }
  return { address: /listening on ws:\/\/(\S+)/.exec(output)![1]!, stop: () => child.kill("SIGTERM") };
}

describe("the build at install time", () => {
  it("never fails the install: a build that cannot run warns, exits 0 and leaves no dist/ behind", async () => {
    // A checkout where the build cannot succeed: the script alone, with no esbuild and no sources beside it.
    const root = await mkdtemp(path.join(os.tmpdir(), "sb-cli-build-"));
    await mkdir(path.join(root, "bin"));
    await copyFile(path.join(ROOT, "bin/cli-build.mjs"), path.join(root, "bin/cli-build.mjs"));
    const { stdout, stderr } = await run(process.execPath, [path.join(root, "bin/cli-build.mjs")]);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^switchboard: CLI not built \(.+\); bin\/switchboard runs from the sources\n$/);
    expect(isBuildFresh(path.join(root, "dist"), root)).toBe(false);
    await rm(root, { recursive: true, force: true });
  });
});
