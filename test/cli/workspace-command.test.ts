import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();

/** A home whose config puts the state (and so the workspace) on `backend`. */
async function homeOn(backend: "local" | "postgres"): Promise<string> {
  const home = await tempHome();
  const state = backend === "postgres" ? { backend, postgres: { url: db.url, schema: freshSchema() } } : { backend };
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify({ state }));
  return home;
}

describe.each(["local", "postgres"] as const)(
  "switchboard workspace on the %s backend, without a gateway",
  (backend) => {
    it("puts a file from stdin and from --file, gets it back byte for byte, and lists folders", async () => {
      const home = await homeOn(backend);
      const text = "# Notes\n\n- café ✓\n";
      expect((await cli(["workspace", "put", "main", "memory/today.md"], { home, stdin: text })).code).toBe(0);
      const local = path.join(home, "upload.md");
      await writeFile(local, "owner: Ann\n");
      const put = await cli(["workspace", "put", "main", "USER.md", "--file", local], { home });
      expect(put.stderr).toContain("wrote 11 bytes to USER.md in the workspace of agent main");
      expect((await cli(["workspace", "get", "main", "memory/today.md"], { home })).stdout).toBe(text);
      const top = await cli(["workspace", "ls", "main"], { home });
      expect(top.stdout.split("\n").filter(Boolean)).toEqual(["USER.md\t11 bytes", "memory/"]);
      const json = await cli(["workspace", "ls", "main", "memory", "--json"], { home });
      expect(JSON.parse(json.stdout)).toEqual([{ name: "today.md", type: "file", bytes: Buffer.byteLength(text) }]);
      // Where it went: the folder on the local backend, rows (no file in the home) on PostgreSQL.
      const files = (await readdir(home, { recursive: true })).map(String);
      expect(files.some((file) => file.endsWith("today.md"))).toBe(backend === "local");
    });

    it("says what is missing or wrong and exits non-zero", async () => {
      const home = await homeOn(backend);
      await cli(["workspace", "put", "main", "a.md"], { home, stdin: "x" });
      const missing = await cli(["workspace", "get", "main", "nope.md"], { home });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('agent main has no file "nope.md" in its workspace');
      const outside = await cli(["workspace", "put", "main", "../escape.md"], { home, stdin: "x" });
      expect(outside.code).toBe(2);
      expect(outside.stderr).toContain("is not a path inside the workspace");
      const agent = await cli(["workspace", "ls", "mian"], { home });
      expect(agent.code).toBe(2);
      expect(agent.stderr).toContain('unknown agent "mian" (did you mean main?)');
    });
  },
);

describe("switchboard workspace on the local backend", () => {
  it("edits the workspace folder itself, where the gateway reads it", async () => {
    const home = await homeOn("local");
    await cli(["workspace", "put", "main", "MEMORY.md"], { home, stdin: "remember this" });
    expect(await readFile(path.join(home, "agents", "main", "workspace", "MEMORY.md"), "utf8")).toBe("remember this");
  });
});
