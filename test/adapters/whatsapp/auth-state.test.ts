import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openAuthState } from "../../../adapters/whatsapp/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { BOT_ME } from "../../fakes/fake-whatsapp.js";
import { runAndKill } from "../../support/run-and-kill.js";

async function linkedDir(): Promise<string> {
  const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-wa-auth-")), "default");
  const auth = await openAuthState(dir, createMemoryLogger());
  auth.state.creds.me = BOT_ME;
  await auth.saveCreds();
  await auth.saveCreds(); // the second save keeps the first as the backup
  return dir;
}

describe("openAuthState", () => {
  it("creates the credentials folder with mode 0700 and starts unlinked", async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-wa-auth-")), "nested", "default");
    const auth = await openAuthState(dir, createMemoryLogger());
    expect(auth.linked()).toBe(false);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it("reads back saved credentials, keys included, with their binary fields", async () => {
    const dir = await linkedDir();
    const first = await openAuthState(dir, createMemoryLogger());
    await first.state.keys.set({ "lid-mapping": { "15550002222": "99990002222" } });
    const again = await openAuthState(dir, createMemoryLogger());
    expect(again.linked()).toBe(true);
    expect(again.state.creds.me).toEqual(BOT_ME);
    expect(Buffer.isBuffer(again.state.creds.noiseKey.private)).toBe(true);
    expect(await again.state.keys.get("lid-mapping", ["15550002222"])).toEqual({ "15550002222": "99990002222" });
  });

  it("restores the backup when creds.json is corrupt and keeps the bad file aside", async () => {
    const dir = await linkedDir();
    await writeFile(path.join(dir, "creds.json"), '{"noiseKey": {"priv');
    const logger = createMemoryLogger();
    const auth = await openAuthState(dir, logger);
    expect(auth.state.creds.me).toEqual(BOT_ME);
    expect(JSON.parse(await readFile(path.join(dir, "creds.json"), "utf8")).me).toEqual(BOT_ME);
    expect((await readdir(dir)).some((f) => f.startsWith("creds.json.corrupt-"))).toBe(true);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("restored the backup") }),
    );
  });

  it("refuses corrupt credentials without a backup with the command that links again", async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-wa-auth-")), "default");
    await openAuthState(dir, createMemoryLogger());
    await writeFile(path.join(dir, "creds.json"), "not json");
    await expect(openAuthState(dir, createMemoryLogger())).rejects.toThrow(/switchboard channels login whatsapp/);
  });
});

describe("saveCreds under SIGKILL", () => {
  it("leaves linked credentials holding at least the last acknowledged save, and no temp files once reopened", async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-wa-kill-")), "default");
    let start = 0;
    for (let round = 0; round < 2; round++) {
      const acked = await runAndKill("whatsapp-creds-writer.ts", [dir, String(start)], 30 + round * 40);
      const auth = await openAuthState(dir, createMemoryLogger());
      expect(auth.linked()).toBe(true);
      const saved = Number(auth.state.creds.me?.name?.replace("save-", ""));
      if (acked.length > 0) expect(saved).toBeGreaterThanOrEqual(Math.max(...acked));
      expect((await readdir(dir)).filter((f) => f.includes(".tmp") || f.includes(".corrupt-"))).toEqual([]);
      start = saved + 1_000_000;
    }
  }, 60_000);
});
