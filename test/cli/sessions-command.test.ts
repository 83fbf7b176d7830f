import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { createSessionStore } from "../../src/sessions/session-store.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { startTestGateway } from "../support/test-gateway.js";

let home: string;
/** the running gateway's state: one port, its journal in `<home>/state`, as the gateway keeps it */
let state: StatePort;

async function seed(
  agentId: string,
  rows: Record<string, { sessionId: string; updatedAt: number; [k: string]: unknown }>,
) {
  const store = await createSessionStore({
    state,
    path: path.join(home, "agents", agentId, "sessions", "sessions.json"),
    keys: { defaultAgentId: agentId },
    logger: createMemoryLogger(),
  });
  for (const [key, row] of Object.entries(rows)) await store.patch(key, () => row);
}

beforeEach(async () => {
  home = await tempHome();
  state = openLocalState({ dir: path.join(home, "state"), logger: createMemoryLogger() });
  return () => state.close();
});

describe("switchboard sessions", () => {
  it("lists every agent's sessions newest first, with --active and --agent filters", async () => {
    await writeFile(path.join(home, "switchboard.json5"), `{ agents: { list: [{ id: "main" }, { id: "ops" }] } }`);
    const now = Date.now();
    await seed("main", {
      "agent:main:main": { sessionId: "m1", updatedAt: now - 2 * 60_000, model: "offline/echo" },
      "agent:main:telegram:group:-100": {
        sessionId: "m2",
        updatedAt: now - 90 * 60_000,
        displayName: "telegram:g-100",
        sendPolicy: "deny",
      },
    });
    await seed("ops", { "agent:ops:cron:nightly": { sessionId: "o1", updatedAt: now - 10 * 60_000 } });

    const all = await cli(["sessions", "--json"], { home });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout).map((r: { key: string }) => r.key)).toEqual([
      "agent:main:main",
      "agent:ops:cron:nightly",
      "agent:main:telegram:group:-100",
    ]);
    expect(JSON.parse(all.stdout)[2]).toMatchObject({
      agentId: "main",
      kind: "group",
      channel: "telegram",
      sessionId: "m2",
      sendPolicy: "deny",
    });

    const active = await cli(["sessions", "--json", "--active", "30"], { home });
    expect(JSON.parse(active.stdout).map((r: { sessionId: string }) => r.sessionId)).toEqual(["m1", "o1"]);
    const ops = await cli(["sessions", "--agent", "ops"], { home });
    expect(ops.stdout).toMatch(/^\s*10m ago {2}cron {5}agent:ops:cron:nightly$/m);
  });

  it("refuses a bad --active value", async () => {
    const { code, stderr } = await cli(["sessions", "--active", "soon"], { home });
    expect(code).toBe(2);
    expect(stderr).toContain("--active must be a positive number of minutes");
  });

  it("refuses an unknown --agent, naming the agents, instead of saying there are no sessions", async () => {
    const { code, stdout, stderr } = await cli(["sessions", "--agent", "nope"], { home });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe('unknown agent "nope"; agents: main\n');
    expect((await cli(["sessions", "--agent", "mian"], { home })).stderr).toContain("(did you mean main?)");
  });
});

describe("switchboard status", () => {
  it("shows store paths, counts, recent sessions and corrupt files set aside", async () => {
    await seed("main", { "agent:main:main": { sessionId: "m1", updatedAt: Date.now() } });
    // The store's changes are in the gateway's journal (state/), so its own folder may not exist yet.
    await mkdir(path.join(home, "agents", "main", "sessions"), { recursive: true });
    await writeFile(
      path.join(home, "agents", "main", "sessions", "sessions.json.corrupt-2026-11-20T10-00-00-000Z"),
      "{oops",
    );
    const { code, stdout } = await cli(["status", "--json", "--url", "ws://127.0.0.1:9"], { home });
    expect(code).toBe(0);
    const status = JSON.parse(stdout);
    expect(status.agents).toEqual([
      expect.objectContaining({
        agentId: "main",
        sessions: 1,
        storePath: path.join(home, "agents/main/sessions/sessions.json"),
        corruptFiles: [path.join(home, "agents/main/sessions/sessions.json.corrupt-2026-11-20T10-00-00-000Z")],
        recent: [expect.objectContaining({ key: "agent:main:main", sessionId: "m1" })],
      }),
    ]);
  });

  it("asks the running gateway first: lanes, runs, outbox and stores", async () => {
    const gw = await startTestGateway({ home });
    try {
      const { code, stdout } = await cli(["status", "--json", "--url", gw.gateway.url], { home });
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({
        source: "gateway",
        model: { default: "offline/echo", offline: true },
        outbox: { pending: 0 },
        channels: ["webchat"],
      });
      const text = await cli(["status", "--url", gw.gateway.url], { home });
      expect(text.stdout).toMatch(/^gateway {2}pid \d+/m);
    } finally {
      await gw.close();
    }
  });

  it("finds a gateway started on another port through its gateway.lock, without --url", async () => {
    const gw = await startTestGateway({ home }); // listens on a free port, not 18789
    try {
      const { code, stdout } = await cli(["status", "--json"], { home });
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ source: "gateway", gateway: { pid: process.pid } });
    } finally {
      await gw.close();
    }
  });

  it("says when no gateway runs, and when the one holding gateway.lock does not answer", async () => {
    const none = await cli(["status"], { home });
    expect(none.stdout.split("\n")[0]).toBe(
      `gateway no gateway runs on ${home} (no live gateway.lock there). Start one with \`npm start\` (or \`bin/switchboard gateway run\`), or pass --url.`,
    );
    // A live process (this test's) holds the lock but nothing listens on its port.
    await writeFile(
      path.join(home, "gateway.lock"),
      JSON.stringify({ pid: process.pid, port: 9, url: "ws://127.0.0.1:9" }),
    );
    const silent = await cli(["status", "--json"], { home });
    expect(JSON.parse(silent.stdout)).toMatchObject({
      source: "files",
      gateway: {
        running: true,
        url: "ws://127.0.0.1:9",
        problem: expect.stringMatching(/^the gateway of .* \(pid \d+\) does not answer at ws:\/\/127\.0\.0\.1:9: /),
      },
    });
    // A lock left by a process that is gone names no gateway.
    await writeFile(path.join(home, "gateway.lock"), JSON.stringify({ pid: 2 ** 22 + 1, port: 9 }));
    expect((await cli(["status"], { home })).stdout).toContain("no gateway runs on");
  });

  it("reports a corrupt store without moving or changing it", async () => {
    const dir = path.join(home, "agents", "main", "sessions");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "sessions.json"), "{ not json");
    const { code, stdout } = await cli(["status", "--url", "ws://127.0.0.1:9"], { home });
    expect(code).toBe(0);
    expect(stdout).toMatch(/PROBLEM .*sessions\.json is not a valid JSON object/);
    expect(await readdir(dir)).toEqual(["sessions.json"]);
  });
});
