// The CLI's readers without a gateway (`sessions`, `status`, `doctor`, `inbox list`, `cron list`)
// on a gateway configured for PostgreSQL: they read the rows the gateway wrote through the
// PostgreSQL state port, read-only, and show them as they show the local files.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CronJobSchema } from "../../src/cron/cron-job.js";
import { openCronJobStore } from "../../src/cron/cron-job-store.js";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { openPairingStore } from "../../src/inbound/pairing-store.js";
import { createMemoryLogger } from "../../src/logger.js";
import { createSessionStore } from "../../src/sessions/session-store.js";
import { openStateBackend } from "../../src/state/open-state-backend.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { seedOutbox, seedSetAside } from "../support/queue-rows.js";

const db = usePostgres();
const logger = createMemoryLogger();
let home: string;
let env: Record<string, string>;

async function homeOn(schema: string): Promise<string> {
  const dir = await tempHome();
  // port 1: no gateway answers there, so every reader reads the state
  const config = {
    gateway: { port: 1 },
    agents: { list: [{ id: "main" }, { id: "ops" }] },
    state: { backend: "postgres", postgres: { schema } },
  };
  await writeFile(path.join(dir, "switchboard.json5"), JSON.stringify(config));
  return dir;
}

/** Writes a session per agent, a retrying and a failed outbox item, a set-aside inbox entry and a cron job, as a gateway would. */
async function seed(schema: string): Promise<void> {
  const backend = await openStateBackend({
    config: { backend: "postgres", postgres: { url: db.url, schema, poolSize: 2 } },
    env: {},
    dir: path.join(home, "state"),
    logger,
  });
  const { state } = backend;
  const now = Date.now();
  for (const [agentId, key] of [
    ["main", "agent:main:main"],
    ["ops", "agent:ops:cron:nightly"],
  ] as const) {
    const file = path.join(home, "agents", agentId, "sessions", "sessions.json");
    const store = await createSessionStore({ state, path: file, keys: { defaultAgentId: agentId }, logger });
    await store.patch(key, () => ({
      sessionId: `${agentId}-1`,
      updatedAt: agentId === "main" ? now - 120_000 : now - 600_000,
      model: "offline/echo",
    }));
  }
  await seedOutbox(await createOutbox({ state, path: path.join(home, "state", "outbox.json") }), now);
  await seedSetAside(await createInbox({ state, path: path.join(home, "state", "inbox.json"), logger }));
  const jobs = await openCronJobStore({ state, file: path.join(home, "cron", "jobs.json"), logger });
  await jobs.put(
    CronJobSchema.parse({
      id: "brief",
      name: "morning brief",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "m",
      agentId: "main",
      createdAt: now,
      updatedAt: now,
    }),
  );
  const pairing = await openPairingStore({ state, path: path.join(home, "state", "pairing.json") });
  await pairing.ask(
    { channel: "telegram", accountId: "default", senderId: "222", chatId: "222", sessionKey: "agent:main:main" },
    { codeTtlSeconds: 3600, maxPending: 3 },
  );
  await backend.state.close();
}

describe("the CLI's readers on state.backend postgres", () => {
  beforeAll(async () => {
    const schema = freshSchema();
    home = await homeOn(schema);
    env = { SWITCHBOARD_DATABASE_URL: db.url };
    await seed(schema);
  });

  it("sessions lists every agent's rows from the database, newest first", async () => {
    const { code, stdout } = await cli(["sessions", "--json"], { home, env });
    expect(code).toBe(0);
    const rows = JSON.parse(stdout);
    expect(rows.map((row: { key: string }) => row.key)).toEqual(["agent:main:main", "agent:ops:cron:nightly"]);
    expect(rows[0]).toMatchObject({ agentId: "main", sessionId: "main-1", model: "offline/echo" });
    const ops = await cli(["sessions", "--agent", "ops"], { home, env });
    expect(ops.stdout.trim()).toMatch(/^\s*10m ago {2}cron {5}agent:ops:cron:nightly {2}offline\/echo$/);
  });

  it("status reads the counts and recent sessions from the database and names it, password masked", async () => {
    const { code, stdout } = await cli(["status"], { home, env });
    expect(code).toBe(0);
    expect(stdout).toContain("(what follows is read from the database)");
    expect(stdout).toMatch(/state {3}postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres \(schema t/);
    expect(stdout).toMatch(/agent main: 1 session .*\n\s+2m ago {2}agent:main:main/);
    expect(stdout).toContain("agent ops: 1 session");
    expect(stdout).not.toContain(new URL(db.url).password);
    const json = JSON.parse((await cli(["status", "--json"], { home, env })).stdout);
    expect(json).toMatchObject({ source: "database", state: { backend: "postgres" } });
    expect(json.agents.map((agent: { sessions: number }) => agent.sessions)).toEqual([1, 1]);
  });

  it("doctor and inbox list show the outbox and the set-aside messages stored in the database", async () => {
    const { code, stdout } = await cli(["doctor"], { home, env });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /outbox: 1 waiting to be delivered \(1 retrying; .*last error network: Telegram unreachable\)/,
    );
    expect(stdout).toMatch(/failed \dm ago: reply to telegram:43 .*chat_not_found: Telegram chat 43 not found/);
    expect(stdout).toContain("inbox: 1 message(s) set aside");
    const listed = await cli(["inbox", "list"], { home, env });
    expect(listed.stdout).toContain('"the poison": its turn did not finish in 3 starts');
  });

  it("cron list without a gateway reads the jobs from the database", async () => {
    const { code, stdout, stderr } = await cli(["cron", "list"], { home, env });
    expect(code).toBe(0);
    expect(stderr).toContain("the jobs below are read from the state");
    expect(stdout).toMatch(/^brief {2}morning brief {2}every 3600s {2}next /);
  });

  it("pairing list without a gateway reads the codes from the database; approve and deny write nothing there and name --url", async () => {
    const listed = await cli(["pairing", "list", "--json"], { home, env });
    expect(listed.code).toBe(0);
    const [pending] = JSON.parse(listed.stdout).pending as Array<{ code: string; senderId: string }>;
    expect(pending).toMatchObject({ senderId: "222" });
    for (const verdict of ["approve", "deny"]) {
      const { code, stderr } = await cli(["pairing", verdict, pending!.code], { home, env });
      expect(code).toBe(1);
      expect(stderr).toContain('state.backend is "postgres": codes are approved and denied by the running gateways');
    }
    const again = JSON.parse((await cli(["pairing", "list", "--json"], { home, env })).stdout);
    expect(again).toMatchObject({ pending: [{ code: pending!.code, status: "pending" }], allowed: [] });
  });

  it("a database that cannot be reached: one line naming the url, password masked, and exit 1", async () => {
    const url = "postgres://sb:hunter2@127.0.0.1:9/sb";
    for (const argv of [["sessions"], ["status"], ["cron", "list"]]) {
      const { code, stderr } = await cli(argv, { home, env: { SWITCHBOARD_DATABASE_URL: url } });
      expect(code).toBe(1);
      expect(stderr).toMatch(/PostgreSQL at postgres:\/\/sb:\*\*\*@127\.0\.0\.1:9\/sb cannot be reached/);
      expect(stderr).not.toContain("hunter2");
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("a schema no gateway has created yet reads as empty", async () => {
    const fresh = await homeOn(freshSchema());
    const { code, stdout } = await cli(["sessions"], { home: fresh, env });
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("no sessions");
  });
});
