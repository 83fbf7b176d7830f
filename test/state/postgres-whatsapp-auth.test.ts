// WhatsApp's linked-device state on PostgreSQL: credentials and signal keys round-trip through rows
// of the channel state, and a write the database refuses half-way (a trigger raising on one row of
// the batch) leaves the previous state whole: a `keys.set` of many keys, and a credentials update,
// land whole or not at all.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAuthState } from "../../adapters/whatsapp/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openChannelStates } from "../../src/state/channel-state.js";
import { openStateBackend } from "../../src/state/open-state-backend.js";
import { BOT_ME } from "../fakes/fake-whatsapp.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
let dir: string;
const admin = () => new pg.Client({ connectionString: db.url });

/** The account's auth state on the file's schema, with how to close it (a "restart"). */
async function open() {
  const logger = createMemoryLogger();
  const backend = await openStateBackend({
    config: { backend: "postgres", postgres: { url: db.url, schema: db.schema, poolSize: 2 } },
    env: {},
    dir: path.join(dir, "state"),
    logger,
  });
  const states = await openChannelStates(backend.state, { file: path.join(dir, "state", "channels.json") });
  const rows = states.forChannel("whatsapp").rows("default");
  const auth = await openAuthState(rows, { logger, legacyDir: path.join(dir, "none") });
  return { auth, rows, close: () => backend.state.close() };
}

const keyPair = (tag: string) => ({ public: Buffer.from(`pub-${tag}`), private: Buffer.from(`priv-${tag}`) });
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "sb-pg-wa-"));
});

describe("WhatsApp auth state on PostgreSQL", () => {
  afterAll(async () => {
    if (!db.url) return;
    const client = admin();
    await client.connect();
    await client.query(`DROP TRIGGER IF EXISTS refuse_poison ON ${db.schema}.state_rows`);
    await client.end();
  });

  it("reads back credentials and 500 keys, binary fields included, after a restart; the rows are in the database", async () => {
    const first = await open();
    first.auth.state.creds.me = BOT_ME;
    await first.auth.saveCreds();
    await first.auth.state.keys.set({ "pre-key": Object.fromEntries(ids(500).map((id) => [id, keyPair("v1")])) });
    await first.close();
    const again = await open();
    expect(again.auth.linked()).toBe(true);
    expect(Buffer.isBuffer(again.auth.state.creds.noiseKey.private)).toBe(true);
    const keys = await again.auth.state.keys.get("pre-key", ids(500));
    expect(Object.keys(keys)).toHaveLength(500);
    expect(Buffer.from(keys["499"]!.private).toString()).toBe("priv-v1");
    await again.close();
    const client = admin();
    await client.connect();
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM ${db.schema}.state_rows WHERE tbl = 'channels' AND key LIKE 'whatsapp/default/%'`,
    );
    await client.end();
    expect(rows[0].n).toBe(501); // the credentials and 500 keys
  });

  it("leaves the previous keys and credentials whole when the database refuses a write half-way", async () => {
    const client = admin();
    await client.connect();
    await client.query(`CREATE OR REPLACE FUNCTION ${db.schema}.refuse_poison() RETURNS trigger AS $$
      BEGIN
        IF NEW.key LIKE '%poison%' OR NEW.value::text LIKE '%poison%' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await client.query(`CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON ${db.schema}.state_rows
      FOR EACH ROW EXECUTE FUNCTION ${db.schema}.refuse_poison()`);
    await client.end();
    const first = await open();
    // 500 keys rewritten, 100 removed, one new key the database refuses (the last of the batch).
    const batch: Record<string, ReturnType<typeof keyPair> | null> = Object.fromEntries(
      ids(500).map((id) => [id, Number(id) < 100 ? null : keyPair("v2")]),
    );
    batch.poison = keyPair("poison");
    await expect(first.auth.state.keys.set({ "pre-key": batch })).rejects.toThrow(/refused by the test/);
    first.auth.state.creds.me = { ...BOT_ME, name: "poison" };
    await expect(first.auth.saveCreds()).rejects.toThrow(/refused by the test/);
    await first.close();
    const again = await open();
    const keys = await again.auth.state.keys.get("pre-key", [...ids(500), "poison"]);
    expect(Object.keys(keys)).toHaveLength(500);
    expect(new Set(Object.values(keys).map((k) => Buffer.from(k.private).toString()))).toEqual(new Set(["priv-v1"]));
    expect(again.auth.state.creds.me).toEqual(BOT_ME);
    await again.close();
  });
});
