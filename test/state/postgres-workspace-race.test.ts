// Workspace files written by turns of one agent on two gateways at once (docs/scale-out.md "Traps
// found on the way"; step 7 lets two owners run turns of one agent). Two databases (two pools, as two
// gateways have) on one schema of a real server; a third connection holds the file's row so that both
// writes are on the server and waiting on it before either runs (a barrier, no sleeps).
import { afterEach, describe, expect, it } from "vitest";
import { ensureWorkspace } from "../../src/agents/workspace/ensure-workspace.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { ToolFailure } from "../../src/tools/tool-definition.js";
import { fileOpsOf } from "../../src/tools/workspace/file-ops.js";
import { postgresWorkspaces } from "../../src/workspace/postgres-workspace.js";
import { until } from "../support/gateway-child.js";
import { waitsOnLock } from "../support/pg-watch.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  for (const database of opened.splice(0)) await database.close();
});

const LIMIT = 64 * 1024;

async function open(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({
    url: db.url,
    schema,
    poolSize: 2,
    logger: createMemoryLogger(),
    probeEveryMs: 0,
  });
  opened.push(database);
  return database;
}

/** Two gateways' file tools on agent main's workspace in one schema, and a connection to hold a row with. */
async function twoGateways() {
  const schema = freshSchema();
  const [a, b, watcher] = [await open(schema), await open(schema), await open(schema)];
  const [wsA, wsB] = [postgresWorkspaces(a)("main"), postgresWorkspaces(b)("main")];
  /** Holds `file`'s row until `release`: writes to it wait on the server. */
  async function holdRow(file: string) {
    const holder = await watcher.pool.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM workspace_files WHERE agent = 'main' AND path = $1 FOR UPDATE", [file]);
    return async () => {
      await holder.query("COMMIT");
      holder.release();
    };
  }
  /** Settles once `count` writes of workspace_files wait on the held row. */
  const bothWaiting = (count: number) =>
    until(() => waitsOnLock(watcher.pool, "query LIKE $1", "%workspace_files%", count));
  return { wsA, wsB, opsA: fileOpsOf(wsA), opsB: fileOpsOf(wsB), holdRow, bothWaiting, watcher };
}

describe("workspace writes by two gateways at once (PostgreSQL)", () => {
  it("lands both appends to one file: neither overwrites the other", async () => {
    const { wsA, opsA, opsB, holdRow, bothWaiting } = await twoGateways();
    await wsA.write("memory/today.md", "# Today\n");
    const release = await holdRow("memory/today.md");
    const appends = Promise.all([
      opsA.append("memory/today.md", "- from gateway A\n", LIMIT),
      opsB.append("memory/today.md", "- from gateway B\n", LIMIT),
    ]);
    await bothWaiting(2);
    await release();
    const sizes = await appends;
    const text = (await wsA.read("memory/today.md"))!;
    expect(text.split("\n").sort()).toEqual(["", "# Today", "- from gateway A", "- from gateway B"]);
    // Each append answers the file's size right after it: one after 8 + 17 bytes, the other after both.
    expect(sizes.sort((x, y) => x - y)).toEqual([25, 42]);
  });

  it("keeps both edits of one file: the edit overtaken reads the file again and applies itself to it", async () => {
    const { wsA, opsA, opsB, holdRow, bothWaiting } = await twoGateways();
    await wsA.write("USER.md", "- Name:\n- Tea:\n");
    const release = await holdRow("USER.md");
    const seen: string[] = [];
    const edit = (from: string, to: string) => (text: string) => {
      seen.push(text);
      return text.replace(from, to);
    };
    const edits = Promise.all([
      opsA.edit("USER.md", edit("- Name:", "- Name: Ann"), LIMIT),
      opsB.edit("USER.md", edit("- Tea:", "- Tea: green"), LIMIT),
    ]);
    await bothWaiting(2);
    await release();
    await edits;
    expect(await wsA.read("USER.md")).toBe("- Name: Ann\n- Tea: green\n");
    // Both changes saw the old text; the one overtaken ran once more on the other's result.
    expect(seen).toHaveLength(3);
    expect(seen.slice(0, 2)).toEqual(["- Name:\n- Tea:\n", "- Name:\n- Tea:\n"]);
  });

  it("answers an edit overtaken at every try with the file tools' error, writing nothing of it", async () => {
    const schema = freshSchema();
    const [a, b] = [await open(schema), await open(schema)];
    const other = postgresWorkspaces(b)("main");
    await other.write("USER.md", "- Name:\n");
    let writes = 0;
    // Gateway B writes the file before each statement of gateway A: A's compare-and-set never holds.
    const busy: PostgresDatabase = {
      ...a,
      transaction: (fn, options) =>
        other.write("USER.md", `- Name:\n- write ${++writes}\n`).then(() => a.transaction(fn, options)),
    };
    const ops = fileOpsOf(postgresWorkspaces(busy)("main"));
    const edit = ops.edit("USER.md", (text) => text.replace("- Name:", "- Name: Ann"), LIMIT);
    await expect(edit).rejects.toBeInstanceOf(ToolFailure);
    await expect(edit).rejects.toThrow('"USER.md" kept changing while it was being edited (5 tries)');
    expect(await other.read("USER.md")).toBe(`- Name:\n- write ${writes}\n`);
  });

  it("never writes a starter file over one another gateway created (and edited) while this one started", async () => {
    const { wsB, bothWaiting, watcher } = await twoGateways();
    // Gateway A's commit that creates USER.md, edited, held open: B's start does not see it yet.
    const other = await watcher.pool.connect();
    await other.query("BEGIN");
    await other.query("INSERT INTO workspace_files (agent, path, content) VALUES ('main', 'USER.md', $1)", [
      "- Name: Ann\n",
    ]);
    const started = ensureWorkspace(wsB);
    await bothWaiting(1);
    await other.query("COMMIT");
    other.release();
    expect((await started).created).toEqual(["AGENTS.md", "MEMORY.md"]);
    expect(await wsB.read("USER.md")).toBe("- Name: Ann\n");
  });
});
