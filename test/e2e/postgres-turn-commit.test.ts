// A commit torn by a kill, on PostgreSQL: a real gateway process (the real Telegram adapter, the
// offline echo model) is SIGKILLed right around the commit of a turn's reply (before the statement
// leaves, while the server has it, after the server committed it: ../fakes/kill-at-turn-commit.ts).
// Its transcript events and its outbox agree at once after the kill (a reply is in the transcript
// exactly when its outbox item is), and after a restart every message is answered, once in the
// transcript and once on the platform.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const MESSAGES = ["one", "two", "three"];

/** What the schema holds: the run ids of the replies in the transcript (with repeats) and in the outbox. */
async function replies(schema: string): Promise<{ transcript: string[]; outbox: string[]; users: string[] }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const events = await client.query<{ role: string; run: string }>(
      `SELECT e.message->>'role' AS role, e.message->>'runId' AS run
       FROM ${schema}.transcript_events e JOIN ${schema}.transcripts t USING (tid) ORDER BY t.tid, e.seq`,
    );
    const outbox = await client.query<{ key: string }>(
      `SELECT key FROM ${schema}.state_rows WHERE tbl = 'outbox' AND key LIKE '%:reply' ORDER BY key`,
    );
    const runs = (role: string) => events.rows.filter((r) => r.role === role).map((r) => r.run);
    return {
      transcript: runs("assistant").sort(),
      outbox: outbox.rows.map((r) => r.key.slice(0, -":reply".length)),
      users: [...new Set(runs("user"))].sort(),
    };
  } finally {
    await client.end();
  }
}

/** Runs the burst with the failpoint `at` on the `n`-th reply commit, then restarts and lets it finish. */
async function killedAround(n: number, at: "send" | "sent" | "acked") {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  const schema = freshSchema();
  const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
  const env = { SB_HOME: await tempHome(), SB_API_ROOT: fake.apiRoot, SB_STATE: JSON.stringify(state) };
  const killed = await start("platform-gateway-process.ts", {
    ...env,
    SB_KILL_AT_TURN_COMMIT: JSON.stringify({ n, at }),
  });
  const exited = new Promise<unknown>((resolve) => killed.process.once("exit", (_code, signal) => resolve(signal)));
  for (const [i, text] of MESSAGES.entries()) fake.push(adaDm(text, i + 1));
  expect(await exited).toBe("SIGKILL");
  const torn = await replies(schema);
  expect(torn.transcript).toEqual(torn.outbox);
  const child = await start("platform-gateway-process.ts", env);
  const answered = () => fake.sent.map((s) => s.text).filter((text) => text.startsWith("Echo:"));
  await until(() => MESSAGES.every((text) => answered().some((reply) => reply.includes(text))), 30_000);
  await child.idle();
  return { torn, after: await replies(schema), sent: answered() };
}

describe("a turn's commit on PostgreSQL torn by a SIGKILL", () => {
  const points = [1, 2].flatMap((n) => (["send", "sent", "acked"] as const).map((at) => ({ n, at })));
  it.each(points)(
    "killed at the reply commit $n ($at): transcript and outbox agree, and every reply is there once",
    async ({ n, at }) => {
      const { torn, after, sent } = await killedAround(n, at);
      // The reply commit killed before it was sent leaves it out of both; every earlier one is in both.
      if (at === "send") expect(torn.outbox).toHaveLength(n - 1);
      expect(after.transcript).toEqual(after.outbox);
      expect(new Set(after.transcript).size).toBe(after.transcript.length);
      // Every turn that began (its user line) ended with its reply: replayed, not lost.
      expect(after.transcript).toEqual(after.users);
      // None was sent twice: the kill came before any reply of its turn left.
      expect(new Set(sent).size).toBe(sent.length);
    },
    120_000,
  );
});
