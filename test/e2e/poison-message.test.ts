// The crash-loop promise of docs/reliability.md, tried with real gateway processes, the real Telegram
// adapter and a fake Bot API: a message whose turn SIGKILLs the process at every start is set aside
// after 3 starts, its sender told once, and the gateway serves everything else; an owner lists it and
// retries it (after the "bug" is gone) with `switchboard inbox`.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SET_ASIDE_NOTICE } from "../../src/inbound/set-aside.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { cli } from "../support/fake-cli-io.js";
import { gatewayCall, until, useGatewayChildren } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";
import { compiledScript } from "../support/compiled-script.js";

const SCRIPT = path.resolve(import.meta.dirname, "../fakes/platform-gateway-process.ts");
const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
const dying: ChildProcess[] = [];
afterEach(async () => {
  for (const child of dying.splice(0)) child.kill("SIGKILL");
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Starts a gateway whose turns die on `poison`, and resolves with the signal that ended it. */
async function runUntilKilled(env: Record<string, string>): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, [await compiledScript(SCRIPT)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  dying.push(child);
  return new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
}

interface Listed {
  entries: Array<{ id: string; starts: number; text: string; reason: string; sessionKey?: string }>;
}

const sentTexts = (fake: FakeTelegramServer) => fake.sent.map((s) => s.text);

describe("a message whose turn kills the gateway", () => {
  it("is set aside after 3 starts: the 4th serves other messages at once, the sender is told once, inbox list shows it, inbox retry runs it", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot };
    fake.push(adaDm("please poison-pill", 1));
    // Queued behind it in the same session: it never starts while the poison kills, so it is never set aside.
    fake.push(adaDm("hello", 2));
    // Start 1 takes the message and dies in its turn; starts 2 and 3 replay it and die the same way.
    for (let i = 0; i < 3; i++) expect(await runUntilKilled({ ...env, SB_DIE_ON: "poison-pill" })).toBe("SIGKILL");

    const gateway = await start("platform-gateway-process.ts", env);
    await until(() => sentTexts(fake).includes("Echo: hello"));
    expect(sentTexts(fake).filter((t) => t === SET_ASIDE_NOTICE)).toHaveLength(1);
    expect(sentTexts(fake).filter((t) => t === "Echo: hello")).toHaveLength(1);
    expect(sentTexts(fake)).not.toContain("Echo: please poison-pill");

    const listed = await gatewayCall<Listed>(gateway.url, "inbox.list");
    expect(listed!.entries).toHaveLength(1);
    const [entry] = listed!.entries;
    expect(entry).toMatchObject({ starts: 3, text: "please poison-pill" });
    expect(entry!.reason).toContain("did not finish in 3 starts");
    const cliList = await cli(["inbox", "list", "--url", gateway.url], { home });
    expect(cliList.stdout).toContain(entry!.id);
    expect(cliList.stdout).toContain("after 3 starts");

    fake.push(adaDm("/status", 3));
    await until(() => sentTexts(fake).some((t) => t.includes("Set aside: 1")));

    // The "bug" is fixed (this process has no poison hook): a retry runs the turn and answers it.
    const retried = await cli(["inbox", "retry", entry!.id, "--url", gateway.url], { home });
    expect(retried.code).toBe(0);
    await until(() => sentTexts(fake).includes("Echo: please poison-pill"));
    expect((await gatewayCall<Listed>(gateway.url, "inbox.list"))!.entries).toEqual([]);
    expect(sentTexts(fake).filter((t) => t === SET_ASIDE_NOTICE)).toHaveLength(1);
  }, 90_000);
});
