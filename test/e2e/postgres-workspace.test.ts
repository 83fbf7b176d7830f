// A gateway on PostgreSQL keeps the agent workspace in the database: what `switchboard workspace put`
// writes is in the next turn's system prompt and what the `read` tool returns, what the agent writes
// with the `write` tool is what `switchboard workspace get` prints, and the home gets no workspace folder.
import { stat, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import { cli } from "../support/fake-cli-io.js";
import { until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

// Rules in order: the first whose words are in the system prompt or the latest message answers.
/** A rule that calls tools `first`, and answers `then` once the turn has their results. */
const afterTools = (when: string, first: PlayStep, then: PlayStep): PlaybookRule => ({ when, first, then });
const PLAY: PlaybookRule[] = [
  afterTools(
    "please save",
    { toolCalls: [{ name: "write", input: { path: "memory/note.md", content: "saved by the agent\n" } }] },
    { text: "Saved." },
  ),
  afterTools(
    "PAPAYA-7",
    { toolCalls: [{ name: "read", input: { path: "MEMORY.md" } }] },
    { text: "My prompt holds PAPAYA-7." },
  ),
  { when: "", first: { text: "Nothing in my prompt." } },
];

/** The text of every tool result of the schema's transcripts. */
async function toolResults(schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT e.message::text AS message FROM ${schema}.transcript_events e WHERE e.message->>'role' = 'toolResult'`,
    );
    return rows.map((r) => r.message).join("\n");
  } finally {
    await client.end();
  }
}

describe("the agent workspace of a gateway on PostgreSQL", () => {
  it("is the rows `switchboard workspace` edits: the prompt, read and write use them, and no folder is made", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const schema = freshSchema();
    const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
    await writeFile(path.join(home, "switchboard.json5"), JSON.stringify({ state }));
    const memory = "# Durable notes\n- The owner's code word is PAPAYA-7.\n";
    expect((await cli(["workspace", "put", "main", "MEMORY.md"], { home, stdin: memory })).code).toBe(0);

    const env = {
      SB_HOME: home,
      SB_API_ROOT: fake.apiRoot,
      SB_STATE: JSON.stringify(state),
      SB_PLAY: JSON.stringify(PLAY),
    };
    const child = await start("platform-gateway-process.ts", env);
    fake.push(adaDm("what do you remember?", 1));
    await until(() => fake.sent.length === 1);
    fake.push(adaDm("please save a note", 2));
    await until(() => fake.sent.length === 2);
    await child.idle();

    expect(fake.sent.map((s) => s.text)).toEqual(["My prompt holds PAPAYA-7.", "Saved."]);
    expect(await toolResults(schema)).toContain("PAPAYA-7");
    const got = await cli(["workspace", "get", "main", "memory/note.md"], { home });
    expect(got.stdout).toBe("saved by the agent\n");
    // The bootstrap filled in the starter files it found missing, and kept the one put before.
    const listed = await cli(["workspace", "ls", "main"], { home });
    expect(listed.stdout).toContain("AGENTS.md");
    expect((await cli(["workspace", "get", "main", "MEMORY.md"], { home })).stdout).toBe(memory);
    await expect(stat(path.join(home, "agents", "main", "workspace"))).rejects.toThrow(/ENOENT/);
  }, 120_000);
});
