// The gateway on PostgreSQL as a user runs it: `bin/switchboard gateway run` refusing a database it
// cannot use (one line, no stack trace, within 15 s) and migrating a new schema. (The burst SIGKILLed
// twice runs on PostgreSQL in inbox-durability.test.ts, its restart in postgres-restart.test.ts.)
import { spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { buildCli } from "../../bin/cli-build.mjs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const ROOT = path.resolve(import.meta.dirname, "../..");
// The CLI as `npm ci` builds it (bin/cli-build.mjs), so the timing is a user's start, not TypeScript
// compiling, and the migrations are proven to be found from the bundle. Beside node_modules, as dist/ is.
const built = path.join(ROOT, "node_modules", ".cache", `sb-pg-cli-${process.pid}`);
beforeAll(() => buildCli(built, ROOT), 60_000);
afterAll(() => rm(built, { recursive: true, force: true }));

/** Runs `gateway run` on a home whose state is on PostgreSQL at `url`; resolves with its exit and output. */
async function runGateway(url: string, until?: RegExp): Promise<{ code: number | null; output: string; ms: number }> {
  const home = await tempHome();
  const state = { backend: "postgres", postgres: { schema: freshSchema() } };
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify({ state }));
  const began = Date.now();
  const child = spawn(process.execPath, [path.join(built, "entry.js"), "gateway", "run", "--port", "0"], {
    env: {
      ...process.env,
      SWITCHBOARD_HOME: home,
      SWITCHBOARD_DATABASE_URL: url,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const onOutput = (chunk: Buffer) => {
    output += chunk.toString();
    if (until?.test(output)) child.kill("SIGTERM");
  };
  child.stdout.on("data", onOutput);
  child.stderr.on("data", onOutput);
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  return { code, output, ms: Date.now() - began };
}

function withUrl(change: (url: URL) => void): string {
  const url = new URL(db.url);
  change(url);
  return url.toString();
}

describe("a gateway on PostgreSQL", () => {
  it.each([
    ["a refused password", (url: URL) => (url.password = "wrong-password"), /refused user "postgres"/],
    ["a missing database", (url: URL) => (url.pathname = "/nope"), /has no database "nope"/],
    ["a server that is not there", (url: URL) => (url.port = "1"), /cannot be reached/],
  ])(
    "exits non-zero within 15 s on %s, with one line naming the masked url and the fix",
    async (_what, change, says) => {
      const { code, output, ms } = await runGateway(withUrl(change));
      expect(code, output).toBe(1);
      expect(ms).toBeLessThan(15_000);
      const lines = output.trim().split("\n");
      expect(lines, output).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^gateway not started: PostgreSQL at postgres:\/\/postgres(:\*\*\*)?@127\.0\.0\.1:\d+\//,
      );
      expect(lines[0]).toMatch(says);
      expect(output).not.toContain("wrong-password");
      expect(output).not.toMatch(/\n\s+at /);
    },
    30_000,
  );

  it("starts on a new schema, migrated by the built CLI (the migration files ship with it)", async () => {
    const { output } = await runGateway(db.url, /listening on/);
    expect(output).toMatch(/listening on ws:/);
    expect(output).toContain('"msg":"applied a database migration"');
  }, 30_000);
});
