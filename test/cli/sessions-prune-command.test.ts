import { mkdir, readdir, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { useTestGateways } from "../support/test-gateway.js";

const DAY = 86_400_000;

/** A home whose main agent has an old hook session, an old DM, a fresh cron session and an old /new leftover. */
async function homeWithSessions(ageDays = 40): Promise<string> {
  const dir = await tempHome();
  const sessions = path.join(dir, "agents", "main", "sessions");
  await mkdir(sessions, { recursive: true });
  const old = Date.now() - ageDays * DAY;
  const rows = {
    "agent:main:hook:h1": { sessionId: "s-hook", updatedAt: old },
    "agent:main:telegram:dm:42": { sessionId: "s-dm", updatedAt: old },
    "agent:main:cron:nightly": { sessionId: "s-cron", updatedAt: Date.now() },
  };
  await writeFile(path.join(sessions, "sessions.json"), JSON.stringify(rows));
  for (const id of ["s-hook", "s-dm", "s-cron", "s-reset"]) {
    const header = { type: "session", version: 1, id, timestamp: new Date(old).toISOString(), cwd: "/" };
    await writeFile(path.join(sessions, `${id}.jsonl`), `${JSON.stringify(header)}\n`);
  }
  // A transcript /new left behind.
  await utimes(path.join(sessions, "s-reset.jsonl"), old / 1000, old / 1000);
  return dir;
}

const transcripts = async (home: string) =>
  (await readdir(path.join(home, "agents", "main", "sessions"))).filter((f) => f.endsWith(".jsonl")).sort();

describe("switchboard sessions prune", () => {
  it("works on the files when no gateway runs and prints what it removed", async () => {
    const home = await homeWithSessions();
    const dry = await cli(["sessions", "prune", "--dry-run"], { home });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would remove session {2}hook {5}agent:main:hook:h1/);
    expect(dry.stdout).toMatch(/would remove archive .*s-reset\.jsonl/);
    expect(dry.stdout).toContain("would remove 1 session and 1 archived transcript");
    expect(dry.stdout).toContain("in the files (no gateway runs); nothing changed");
    expect(await transcripts(home)).toEqual(["s-cron.jsonl", "s-dm.jsonl", "s-hook.jsonl", "s-reset.jsonl"]);

    const run = await cli(["sessions", "prune", "--kind", "hook"], { home });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("removed 1 session and 0 archived transcripts");
    expect(await transcripts(home)).toEqual(["s-cron.jsonl", "s-dm.jsonl", "s-reset.jsonl"]);
    const listed = await cli(["sessions", "--json"], { home });
    expect(
      JSON.parse(listed.stdout)
        .map((r: { key: string }) => r.key)
        .sort(),
    ).toEqual(["agent:main:cron:nightly", "agent:main:telegram:dm:42"]);
    // The lock it took is released: a later run can take it again.
    expect((await readdir(home)).includes("gateway.lock")).toBe(false);
  });

  it("refuses a kind it never removes and an age it cannot read, naming the fix", async () => {
    const home = await homeWithSessions();
    const group = await cli(["sessions", "prune", "--kind", "group"], { home });
    expect(group.code).toBe(2);
    expect(group.stderr).toContain("--kind group is not something prune removes: use hook, cron, subagent, archives");
    const age = await cli(["sessions", "prune", "--older-than", "soon"], { home });
    expect(age.code).toBe(2);
    expect(age.stderr).toContain('--older-than must be an age above 0 such as 30d, 12h or 90m, got "soon"');
  });

  const startGateway = useTestGateways();

  it("goes through the running gateway, which holds the files", async () => {
    // Younger than the default 30 days: the gateway's own pass at start keeps them.
    const home = await homeWithSessions(10);
    const gw = await startGateway({ home });
    const run = await cli(["sessions", "prune", "--older-than", "1d", "--json", "--url", gw.gateway.url], { home });
    expect(run.code).toBe(0);
    const outcome = JSON.parse(run.stdout);
    expect(outcome.source).toBe("gateway");
    expect(outcome.items.map((i: { what: string; key?: string }) => i.key ?? i.what)).toEqual([
      "agent:main:hook:h1",
      "archive",
    ]);
    const client = await gw.client();
    const listed = await client.call<{ sessions: Array<{ key: string }> }>("sessions.list");
    expect(listed.sessions.map((s) => s.key).sort()).toEqual(["agent:main:cron:nightly", "agent:main:telegram:dm:42"]);
  });
});
