import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { useTestGateways } from "../support/test-gateway.js";
import { buildClawdbotHome, hashTree } from "./clawdbot-home.js";

describe("switchboard import clawdbot", () => {
  it("writes a Switchboard home from a Clawdbot home, checks the counts, reports what it could not map, and never changes the source", async () => {
    const source = await buildClawdbotHome();
    const before = await hashTree(source);
    const home = await tempHome();

    const run = await cli(["import", "clawdbot", source], { home });

    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(await hashTree(source)).toBe(before);
    expect(run.stdout).toContain("sessions    4 imported of 5 in the source; 4 found in the target");
    expect(run.stdout).toContain("transcripts 6 copied of 6 in the source; 6 found in the target");
    expect(run.stdout).toContain("count check: ok");
    // Each thing it could not map, with its reason; the corrupt files are reported, not fatal.
    for (const expected of [
      "gateway: outside what import brings over",
      "channels.slack: Switchboard has no slack adapter",
      "channels.telegram.streamMode: no Switchboard equivalent",
      "channels.whatsapp.authDir: linked-device credentials are not imported",
      "session.store: Switchboard keeps each agent's store under its own home",
      "agents.defaults.model.fallbacks: Switchboard has no model fallbacks",
      "models.providers.ollama: Switchboard has the openai",
      "models.providers.openai.api: no Switchboard equivalent",
      "agents/work/sessions/sessions.json: corrupt",
      "agent:main:discord:channel:555: no valid sessionId; session not imported",
      "s-cron.jsonl: 1 line(s) Switchboard cannot read (line 2: not JSON",
    ])
      expect(run.stdout).toContain(expected);
    for (const expected of [
      "main: legacy key, imported as agent:main:main",
      "group:12036312@g.us: legacy key, imported as agent:main:whatsapp:group:12036312@g.us",
      "cron:Nightly-Report: legacy key, imported as agent:main:cron:nightly-report",
      "whatsapp: legacy top-level key, read as channels.whatsapp",
      'session.sendPolicy.rules[0].match.provider: legacy name, written as "channel"',
      `channels.whatsapp.dmPolicy: unset (Clawdbot's default is "pairing", Switchboard's "allowlist"): written as "pairing"`,
    ])
      expect(run.stdout).toContain(expected);

    const { config } = await loadConfig(path.join(home, "switchboard.json5"));
    expect(config.channels.telegram?.allowFrom).toEqual(["111", "@ann", "333"]);
    // Pairing is kept: Switchboard pairs too; the people approved so far (333) joined allowFrom.
    expect(config.channels.telegram?.dmPolicy).toBe("pairing");
    expect(config.channels.whatsapp?.dmPolicy).toBe("pairing");
    expect(config.channels.discord).toMatchObject({
      dmPolicy: "allowlist",
      allowFrom: ["222"],
      groupPolicy: "allowlist",
    });
    expect(config.channels.whatsapp?.allowFrom).toEqual(["+15550001"]);
    expect(config.session.dmScope).toBe("per-channel-peer");
    expect(config.session.identityLinks).toEqual({ alice: ["telegram:111", "discord:222"] });
    expect(config.session.sendPolicy.rules).toEqual([
      { action: "deny", match: { channel: "discord", chatType: "group" } },
    ]);
    expect(config.agents.defaults.model).toBe("anthropic/claude-sonnet-4-5");
    expect(config.models.aliases).toEqual({ mini: "openai/gpt-4o-mini" });
    expect(config.models.providers.openai).toMatchObject({ baseUrl: "http://127.0.0.1:11434/v1", apiKey: "sk-x" });

    const listed = JSON.parse((await cli(["sessions", "--json"], { home })).stdout) as Array<{
      key: string;
      channel?: string;
    }>;
    expect(listed.map((r) => r.key).sort()).toEqual([
      "agent:main:cron:nightly-report",
      "agent:main:main",
      "agent:main:telegram:group:-1001234567890:topic:99",
      "agent:main:whatsapp:group:12036312@g.us",
    ]);
    expect(listed.find((r) => r.key === "agent:main:whatsapp:group:12036312@g.us")?.channel).toBe("whatsapp");
    const sessionsDir = path.join(home, "agents", "main", "sessions");
    expect((await readdir(sessionsDir)).filter((f) => f.includes(".jsonl")).sort()).toEqual([
      "s-cron.jsonl",
      "s-main.jsonl",
      "s-old.jsonl.reset.2026-01-01T00-00-00-000Z",
      "s-topic-99.jsonl",
      "s-wa.jsonl",
    ]);
    expect(await readdir(path.join(home, "agents", "work", "sessions"))).toContain("w1.jsonl");
    // Copies keep the source's modification time, which retention counts an archive's age from.
    const sourceFile = path.join(source, "agents", "main", "sessions", "s-wa.jsonl");
    const copiedAt = (await stat(path.join(sessionsDir, "s-wa.jsonl"))).mtimeMs;
    expect(Math.abs(copiedAt - (await stat(sourceFile)).mtimeMs)).toBeLessThan(1); // utimes keeps milliseconds
  });

  it("refuses a home that already has state unless --merge, which keeps what the home has", async () => {
    const source = await buildClawdbotHome();
    const home = await tempHome();
    await writeFile(path.join(home, "switchboard.json5"), "{ session: { dmScope: 'main' } }\n");

    const refused = await cli(["import", "clawdbot", source], { home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("already has state");
    expect(refused.stderr).toContain("pass --merge");
    expect(await readdir(home)).toEqual(["switchboard.json5"]);

    const merged = await cli(["import", "clawdbot", source, "--merge"], { home });
    expect(merged.code).toBe(0);
    expect(await readFile(path.join(home, "switchboard.json5"), "utf8")).toBe("{ session: { dmScope: 'main' } }\n");
    expect(merged.stdout).toContain("switchboard.json5.imported to merge by hand");
    const again = await cli(["import", "clawdbot", source, "--merge"], { home });
    expect(again.stdout).toContain("agent:main:main: the target already has this session; kept the target's");
    expect(again.stdout).toContain("sessions    0 imported of 5");
  });

  it("shows a progress bar on a terminal's stderr, and none when stderr is not a terminal", async () => {
    const source = await buildClawdbotHome();
    const { code, stdout, stderr } = await cli(["import", "clawdbot", source], {
      home: await tempHome(),
      terminalColumns: 80,
    });
    expect(code).toBe(0);
    expect(stderr).toContain("importing [");
    expect(stderr).toContain("8/8 files");
    expect(stdout).toContain("count check: ok");
    // Not a terminal (the other tests): no bar at all.
    const plain = await cli(["import", "clawdbot", source], { home: await tempHome() });
    expect(plain.stderr).toBe("");
  });

  it("refuses a folder that is not a Clawdbot home, naming what it looked for", async () => {
    const run = await cli(["import", "clawdbot", await tempHome()], { home: await tempHome() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "is not a Clawdbot home (no clawdbot.json, moltbot.json, openclaw.json, agents/ or sessions/ in it)",
    );
  });

  const startGateway = useTestGateways();

  it("gives a home a real gateway lists the sessions of and answers in with the imported history", async () => {
    const source = await buildClawdbotHome();
    const home = await tempHome();
    expect((await cli(["import", "clawdbot", source], { home })).code).toBe(0);
    const model = createScriptedModel([{ text: "You asked about notes.txt." }]);
    const raw = JSON5.parse(await readFile(path.join(home, "switchboard.json5"), "utf8"));
    // No platform adapters in this test; and the imported sessions (from January) follow the reset
    // policy like any other, so a long idle window keeps the main one fresh for this turn.
    const session = { ...raw.session, reset: { mode: "idle", idleMinutes: 10_000_000 } };
    const gw = await startGateway({ home, config: { ...raw, channels: {}, session }, model });
    const client = await gw.client();

    await gw.gateway.core.retention.settled();
    const listed = await client.call<{ sessions: Array<{ key: string }> }>("sessions.list");
    // Retention applied at the first start: the January cron session and reset archive are past 30 days.
    expect(listed.sessions.map((s) => s.key).sort()).toEqual([
      "agent:main:main",
      "agent:main:telegram:group:-1001234567890:topic:99",
      "agent:main:whatsapp:group:12036312@g.us",
    ]);
    expect((await readdir(path.join(home, "agents", "main", "sessions"))).filter((f) => f.includes("s-old"))).toEqual(
      [],
    );
    const history = await client.call<{ messages: Array<{ role: string }> }>("chat.history", {
      sessionKey: "agent:main:main",
    });
    expect(history.messages.map((m) => m.role)).toContain("assistant");

    const { runId } = await client.call<{ runId: string }>("agent", {
      sessionKey: "agent:main:main",
      message: "and then?",
    });
    expect(await client.call("agent.wait", { runId, timeoutMs: 10_000 })).toMatchObject({ status: "ok" });
    const prompt = JSON.stringify(model.prompts[0]);
    for (const earlier of ["What is in notes.txt?", "call_1", "buy oat milk", "It says: buy oat milk.", "and then?"])
      expect(prompt).toContain(earlier);
  });
});
