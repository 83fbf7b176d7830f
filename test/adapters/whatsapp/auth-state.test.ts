import { mkdir, mkdtemp, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { BufferJSON } from "baileys";
import { describe, expect, it } from "vitest";
import { openAuthState } from "../../../adapters/whatsapp/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { openChannelStates } from "../../../src/state/channel-state.js";
import { openLocalState } from "../../../src/state/local-state.js";
import { BOT_ME, linkDevice } from "../../fakes/fake-whatsapp.js";
import { runAndKill } from "../../support/run-and-kill.js";

// The auth state on the local backend (rows of `state/channels.json` and the journal); the same on
// PostgreSQL, with a refused write, is test/state/postgres-whatsapp-auth.test.ts.

/** The auth state of account "default" in home `dir`, with its port (close it to "restart"). */
async function open(dir: string, logger = createMemoryLogger()) {
  const state = openLocalState({ dir: path.join(dir, "state"), logger });
  const states = await openChannelStates(state, { file: path.join(dir, "state", "channels.json") });
  const rows = states.forChannel("whatsapp").rows("default");
  const auth = await openAuthState(rows, { logger, legacyDir: path.join(dir, "channels", "whatsapp", "default") });
  return { auth, rows, close: () => state.close() };
}

const home = () => mkdtemp(path.join(os.tmpdir(), "sb-wa-auth-"));

describe("openAuthState", () => {
  it("starts unlinked and reads back saved credentials and keys, binary fields included, after a restart", async () => {
    const dir = await home();
    const first = await open(dir);
    expect(first.auth.linked()).toBe(false);
    first.auth.state.creds.me = BOT_ME;
    await first.auth.saveCreds();
    await first.auth.state.keys.set({
      "lid-mapping": { "15550002222": "99990002222" },
      session: { "15550002222.0": Buffer.from([1, 2, 3]) as unknown as Uint8Array },
    });
    await first.auth.state.keys.set({ "lid-mapping": { "15550002222": null } });
    await first.close();
    const again = await open(dir);
    expect(again.auth.linked()).toBe(true);
    expect(again.auth.state.creds.me).toEqual(BOT_ME);
    expect(Buffer.isBuffer(again.auth.state.creds.noiseKey.private)).toBe(true);
    expect(again.auth.savedAt()).toBeGreaterThan(0);
    expect(await again.auth.state.keys.get("lid-mapping", ["15550002222"])).toEqual({});
    const sessions = await again.auth.state.keys.get("session", ["15550002222.0"]);
    expect(Buffer.from(sessions["15550002222.0"]!)).toEqual(Buffer.from([1, 2, 3]));
    // Nothing is kept in a folder of the account's own.
    expect(await readdir(dir)).toEqual(["state"]);
    await again.close();
  });

  it("imports an earlier version's credentials folder once, keys included, and keeps it as <dir>.imported", async () => {
    const dir = await home();
    const authDir = path.join(dir, "channels", "whatsapp", "default");
    await linkDevice(authDir);
    const key = { public: Buffer.from("pub"), private: Buffer.from("priv") };
    await writeFile(path.join(authDir, "pre-key-7.json"), JSON.stringify(key, BufferJSON.replacer));
    const { auth, close } = await open(dir);
    expect(auth.linked()).toBe(true);
    expect(auth.state.creds.me).toEqual(BOT_ME);
    expect((await auth.state.keys.get("pre-key", ["7"]))["7"]).toEqual(key);
    expect(await readdir(path.join(dir, "channels", "whatsapp"))).toEqual(["default.imported"]);
    await close();
  });

  it("imports the backup of a corrupt creds.json, and refuses with the command that links again when there is none", async () => {
    const dir = await home();
    const authDir = path.join(dir, "channels", "whatsapp", "default");
    await linkDevice(authDir);
    const { readFile } = await import("node:fs/promises");
    await writeFile(path.join(authDir, "creds.json.bak"), await readFile(path.join(authDir, "creds.json")));
    await writeFile(path.join(authDir, "creds.json"), '{"noiseKey": {"priv');
    const logger = createMemoryLogger();
    const { auth, close } = await open(dir, logger);
    expect(auth.state.creds.me).toEqual(BOT_ME);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("imported the backup") }),
    );
    await close();
    const other = await home();
    await mkdir(path.join(other, "channels", "whatsapp", "default"), { recursive: true });
    await writeFile(path.join(other, "channels", "whatsapp", "default", "creds.json"), "not json");
    await expect(open(other)).rejects.toThrow(/switchboard channels login whatsapp/);
  });
});

describe("saves under SIGKILL", () => {
  it("leaves linked credentials holding at least the last acknowledged save, and each key batch whole", async () => {
    const dir = await home();
    let start = 0;
    for (let round = 0; round < 2; round++) {
      const acked = await runAndKill("whatsapp-creds-writer.ts", [dir, String(start)], 30 + round * 40);
      const { auth, close } = await open(dir);
      expect(auth.linked()).toBe(true);
      const saved = Number(auth.state.creds.me?.name?.replace("save-", ""));
      if (acked.length > 0) expect(saved).toBeGreaterThanOrEqual(Math.max(...acked));
      // The 50 keys of one `keys.set` are one commit: all from the same save.
      const ids = Array.from({ length: 50 }, (_, k) => String(k));
      const keys = Object.values(await auth.state.keys.get("pre-key", ids));
      expect(new Set(keys.map((k) => Buffer.from(k.public).toString())).size).toBeLessThanOrEqual(1);
      await close();
      start = saved + 1_000_000;
    }
  }, 60_000);
});
