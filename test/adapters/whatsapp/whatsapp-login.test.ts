// `switchboard channels login|logout|status whatsapp` through the CLI, with the login hook on the
// fake socket: the test plays the phone (shows QR codes, accepts the link, restarts as WhatsApp does).
import { spawn } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it, onTestFinished } from "vitest";
import { createWhatsAppChannel } from "../../../adapters/whatsapp/channel.js";
import { defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { type CliIo, runCli } from "../../../src/cli/main.js";
import { BOT_ME, type FakeWhatsApp, createFakeWhatsApp, linkDevice } from "../../fakes/fake-whatsapp.js";
import { tempHome } from "../../support/fake-cli-io.js";
import { readStateFile } from "../../support/read-state-file.js";

function cli(argv: string[], home: string, fake: FakeWhatsApp) {
  const output = { stdout: "", stderr: "" };
  const io: CliIo = {
    env: { SWITCHBOARD_HOME: home },
    stdin: Object.assign(Readable.from([]), { isTTY: true }),
    stdout: { write: (s: string) => (output.stdout += s) },
    stderr: { write: (s: string) => (output.stderr += s) },
    cwd: home,
    homeDir: home,
    channels: async () => [
      createWhatsAppChannel({
        login: { socketFactory: fake.factory, renderQr: async (text) => `[QR ${text}]`, timeoutMs: 5_000 },
      }),
    ],
  };
  return { output, done: runCli(argv, io) };
}

/** The credentials row of `accountId` in the home's channel state, as another process reads it. */
async function storedCreds(home: string, accountId: string) {
  const rows = await readStateFile(path.join(home, "state", "channels.json"));
  return rows[`whatsapp/${accountId}/creds`]?.value as { me: { id: string } } | undefined;
}

const boom = (statusCode: number) => Object.assign(new Error(`status ${statusCode}`), { output: { statusCode } });

describe("switchboard channels login whatsapp", () => {
  it("shows each QR code WhatsApp rotates, restarts after the scan as WhatsApp asks, and exits 0 with the number", async () => {
    const home = await tempHome();
    const fake = createFakeWhatsApp({ autoOpen: false });
    const { output, done } = cli(["channels", "login", "whatsapp"], home, fake);
    await expect.poll(() => fake.sockets.length).toBe(1);
    fake.current().ev.emit("connection.update", { qr: "QR-ONE" });
    fake.current().ev.emit("connection.update", { qr: "QR-TWO" });
    await expect.poll(() => output.stdout).toContain("[QR QR-TWO]");
    // The phone scanned: baileys stores the identity, then WhatsApp closes with "restart required".
    fake.current().auth.creds.me = BOT_ME;
    fake.current().ev.emit("creds.update", { me: BOT_ME });
    fake.current().end(boom(515));
    await expect.poll(() => fake.sockets.length).toBe(2);
    fake.open();
    expect(await done).toBe(0);
    expect(output.stdout).toContain("[QR QR-ONE]");
    expect(output.stdout).toContain('Linked WhatsApp account "default" as +15550001111');
    // The credentials are rows of the channel state, not files of a folder of their own.
    expect((await storedCreds(home, "default"))?.me.id).toBe(BOT_ME.id);
    expect(await readdir(home)).not.toContain("channels");
    expect(fake.sockets.every((s) => s.ended)).toBe(true);
    const status = cli(["channels", "status"], home, fake);
    expect(await status.done).toBe(0);
    expect(status.output.stdout).toMatch(
      /^whatsapp default: linked as \+15550001111, not run by a gateway yet, credentials saved just now/,
    );
  });

  it("prints a pairing code for --pair-code instead of a QR code", async () => {
    const home = await tempHome();
    const fake = createFakeWhatsApp({ autoOpen: false });
    const { output, done } = cli(
      ["channels", "login", "whatsapp", "--pair-code", "+1 555 000 1111", "--account", "work"],
      home,
      fake,
    );
    await expect.poll(() => fake.sockets.length).toBe(1);
    fake.current().ev.emit("connection.update", { qr: "QR-ONE" });
    await expect.poll(() => output.stdout).toContain("Pairing code: ABCD-1234");
    expect(output.stdout).not.toContain("[QR");
    fake.current().auth.creds.me = BOT_ME;
    fake.open();
    expect(await done).toBe(0);
    expect(output.stdout).toContain('Linked WhatsApp account "work" as +15550001111');
    expect((await storedCreds(home, "work"))?.me.id).toBe(BOT_ME.id);
  });

  it("exits 1 with what to do when the QR code expires unscanned", async () => {
    const home = await tempHome();
    const fake = createFakeWhatsApp({ autoOpen: false });
    const { output, done } = cli(["channels", "login", "whatsapp"], home, fake);
    await expect.poll(() => fake.sockets.length).toBe(1);
    fake.current().end(boom(408));
    expect(await done).toBe(1);
    expect(output.stderr).toContain("the QR code expired before it was scanned; run the command again");
  });

  it("refuses to link while a gateway runs on the home (it holds the channel state), writing nothing", async () => {
    const home = await tempHome();
    const gateway = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    onTestFinished(() => void gateway.kill("SIGKILL"));
    await writeFile(path.join(home, "gateway.lock"), JSON.stringify({ pid: gateway.pid, port: 18789 }));
    const fake = createFakeWhatsApp();
    const { output, done } = cli(["channels", "login", "whatsapp"], home, fake);
    expect(await done).toBe(1);
    expect(output.stderr).toContain(`another gateway (pid ${gateway.pid}, port 18789) already runs on ${home}`);
    expect(output.stderr).toContain("Stop it first");
    expect(fake.sockets).toHaveLength(0);
    expect(await readdir(home)).not.toContain("state");
  });

  it("refuses a --pair-code that is not a phone number with exit 2", async () => {
    const home = await tempHome();
    const fake = createFakeWhatsApp();
    const { output, done } = cli(["channels", "login", "whatsapp", "--pair-code", "abc"], home, fake);
    expect(await done).toBe(2);
    expect(output.stderr).toContain("--pair-code must be your phone number in international form");
    expect(fake.sockets).toHaveLength(0);
  });
});

describe("switchboard channels logout|status whatsapp", () => {
  it("shows a linked account, then unlinks it on WhatsApp and removes its credentials", async () => {
    const home = await tempHome();
    await linkDevice(defaultAuthDir(home, "default"));
    const fake = createFakeWhatsApp();
    const before = cli(["channels", "status"], home, fake);
    expect(await before.done).toBe(0);
    // Linked by an earlier version (a folder not imported yet): shown as linked all the same.
    expect(before.output.stdout).toMatch(/^whatsapp default: linked as \+15550001111, not run by a gateway yet\n/);

    const logout = cli(["channels", "logout", "whatsapp"], home, fake);
    expect(await logout.done).toBe(0);
    expect(fake.sockets).toHaveLength(1);
    expect(logout.output.stdout).toContain('WhatsApp account "default" unlinked; credentials removed');
    expect(await storedCreds(home, "default")).toBeUndefined();
    expect(await readdir(path.join(home, "channels", "whatsapp"))).toEqual([]);

    // WhatsApp is not in the config and nothing is linked any more: no account to show or unlink.
    const after = cli(["channels", "status", "--json"], home, fake);
    expect(await after.done).toBe(0);
    expect(JSON.parse(after.output.stdout)).toEqual({ accounts: [] });
    const again = cli(["channels", "logout", "whatsapp"], home, fake);
    expect(await again.done).toBe(0);
    expect(again.output.stdout).toBe('whatsapp account "default" is not linked here; nothing to unlink.\n');
    expect(fake.sockets).toHaveLength(1);
  });

  it("shows a configured account that is not linked yet, and says a never-linked account has nothing to unlink", async () => {
    const home = await tempHome();
    await writeFile(path.join(home, "switchboard.json5"), `{ channels: { whatsapp: { accounts: { work: {} } } } }`);
    const fake = createFakeWhatsApp();
    const status = cli(["channels", "status", "--json"], home, fake);
    expect(await status.done).toBe(0);
    expect(JSON.parse(status.output.stdout).accounts).toContainEqual(
      expect.objectContaining({ channel: "whatsapp", accountId: "work", linked: false }),
    );
    const logout = cli(["channels", "logout", "whatsapp", "--account", "work"], home, fake);
    expect(await logout.done).toBe(0);
    expect(logout.output.stdout).toBe('whatsapp account "work" is not linked here; nothing to unlink.\n');
    expect(fake.sockets).toHaveLength(0);
  });
});
