// A gateway on PostgreSQL keeps its transcripts in the database: a real gateway process with the
// real Telegram adapter answers DMs, and the conversation is in the schema's transcript rows while
// the home holds no transcript file; after a SIGKILL and a restart the history is all there.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { filesUnder } from "../support/state-backends.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

describe("transcripts of a gateway on PostgreSQL", () => {
  it("are rows in the schema, never files in the home, and survive a SIGKILL", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const schema = freshSchema();
    const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_STATE: JSON.stringify(state) };
    let child = await start("platform-gateway-process.ts", env);
    fake.push(adaDm("first", 1));
    await until(() => fake.sent.some((s) => s.text === "Echo: first"));
    await killHard(child);
    child = await start("platform-gateway-process.ts", env);
    fake.push(adaDm("second", 2));
    await until(() => fake.sent.some((s) => s.text === "Echo: second"));
    await child.idle();
    expect((await filesUnder(home)).filter((f) => f.includes(".jsonl"))).toEqual([]);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT e.message->>'role' AS role, e.message->>'content' AS content
         FROM ${schema}.transcript_events e JOIN ${schema}.transcripts t USING (tid)
         WHERE t.archived_at IS NULL ORDER BY e.seq`,
      );
      expect(rows.filter((r) => r.role === "user").map((r) => r.content)).toEqual(
        expect.arrayContaining([expect.stringContaining("first"), expect.stringContaining("second")]),
      );
      expect(rows.some((r) => r.role === "assistant" && r.content.includes("Echo: second"))).toBe(true);
    } finally {
      await client.end();
    }
  }, 120_000);
});
