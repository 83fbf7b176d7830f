// End to end: cron jobs in the real gateway announcing through the real Telegram adapter to the fake Bot API.
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import type { CronJob } from "../../src/cron/cron-job.js";
import type { CronRunRecord } from "../../src/cron/cron-run-log.js";
import { STRINGS } from "../../src/commands/command-strings.js";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { cli } from "../support/fake-cli-io.js";
import { startPlatformGateway } from "../support/platform-gateway.js";
import { type TestGateway, tempHome } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FORUM_TOPIC = "telegram:-1002000000001:topic:42";

async function setup(
  options: {
    model?: LanguageModel;
    models?: Record<string, LanguageModel>;
    config?: Record<string, unknown>;
    home?: string;
    now?: () => number;
  } = {},
) {
  const fake = await startFakeTelegramServer();
  cleanups.push(fake.close);
  const home = options.home ?? (await tempHome());
  const telegram = {
    botToken: TEST_BOT.token,
    apiRoot: fake.apiRoot,
    allowFrom: ["111", "222"],
    commandAllowFrom: ["111", "222"],
    owners: ["111"],
  };
  const gw = await startPlatformGateway({ ...options, home, channel: { id: "telegram", settings: telegram } });
  cleanups.push(gw.close);
  const client = await gw.client();
  return { fake, gw, client, home };
}

async function runsOf(gw: TestGateway, id: string, count: number): Promise<CronRunRecord[]> {
  const client = await gw.client();
  let runs: CronRunRecord[] = [];
  await expect
    .poll(
      async () => {
        runs = (await client.call<{ runs: CronRunRecord[] }>("cron.runs", { id })).runs;
        return runs.length;
      },
      { timeout: 10_000 },
    )
    .toBe(count);
  return runs;
}

let nextMessageId = 1;
const dmFrom = (id: number, text: string) =>
  ({
    message: {
      message_id: nextMessageId++,
      date: 1767225600,
      chat: { id, type: "private", first_name: "U" },
      from: { id, is_bot: false, first_name: "U" },
      text,
      entities: text.startsWith("/") ? [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }] : [],
    },
  }) as never;

const where = (fake: FakeTelegramServer) =>
  fake.sent.map((s) => ({ chatId: s.chatId, threadId: s.threadId, text: s.text }));

describe("cron jobs through the gateway", () => {
  it("announces the reply of a job whose schedule fires into a forum topic, in an isolated cron session", async () => {
    const { fake, gw, client } = await setup({
      model: createScriptedModel([{ text: "Inbox: 3 new, nothing urgent." }]),
    });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "brief",
      schedule: { kind: "at", atMs: Date.now() + 300 },
      message: "Summarise my inbox",
      delivery: { mode: "announce", to: FORUM_TOPIC },
    });
    await expect
      .poll(() => where(fake), { timeout: 10_000 })
      .toEqual([{ chatId: "-1002000000001", threadId: 42, text: "Inbox: 3 new, nothing urgent." }]);
    const [run] = await runsOf(gw, job.id, 1);
    expect(run).toMatchObject({
      status: "ok",
      delivered: true,
      delivery: "delivered",
      trigger: "schedule",
      sessionKey: `agent:main:cron:${job.id}`,
    });
    // A one-shot job is gone after its success.
    expect((await client.call<{ jobs: CronJob[] }>("cron.list", {})).jobs).toEqual([]);
    const listed = await client.call<{ sessions: Array<{ key: string; kind: string; channel: string }> }>(
      "tools.invoke",
      { tool: "sessions_list", args: { kinds: ["cron"] } },
    );
    expect(listed.sessions).toEqual([
      expect.objectContaining({ key: `agent:main:cron:${job.id}`, kind: "cron", channel: "internal" }),
    ]);
  });

  it('delivers nothing under a keyPrefix "cron:" deny rule but keeps the run\'s transcript', async () => {
    const { fake, gw, client } = await setup({
      model: createScriptedModel([{ text: "secret summary" }]),
      config: { session: { sendPolicy: { rules: [{ action: "deny", match: { keyPrefix: "cron:" } }] } } },
    });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "brief",
      schedule: { kind: "cron", expr: "0 8 * * *", tz: "Europe/Berlin" },
      message: "Summarise",
      delivery: { mode: "announce", to: FORUM_TOPIC },
    });
    const { runId } = await client.call<{ runId: string }>("cron.run", { id: job.id });
    const [run] = await runsOf(gw, job.id, 1);
    expect(run).toMatchObject({ runId, status: "ok", delivered: false, delivery: "denied", trigger: "manual" });
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: `agent:main:cron:${job.id}`,
    });
    expect(JSON.stringify(history.messages)).toContain("secret summary");
    await gw.gateway.core.gate.idle();
    expect(fake.sent).toEqual([]);
  });

  it("gives every isolated run a new sessionId and posts nothing for ANNOUNCE_SKIP", async () => {
    const { fake, gw, client, home } = await setup({
      model: createScriptedModel([{ text: "ANNOUNCE_SKIP" }, { text: "" }]),
    });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "quiet",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "anything new?",
      delivery: { mode: "announce", to: "telegram:111" },
    });
    await client.call("cron.run", { id: job.id });
    await runsOf(gw, job.id, 1);
    await client.call("cron.run", { id: job.id });
    const runs = await runsOf(gw, job.id, 2);
    expect(runs.map((r) => r.delivery)).toEqual(["skipped", "skipped"]);
    expect(runs[0]!.sessionId).not.toBe(runs[1]!.sessionId);
    // The previous run's transcript stays on disk.
    const files = await readdir(path.join(home, "agents", "main", "sessions"));
    expect(files.filter((f) => f.endsWith(".jsonl")).sort()).toEqual(
      [`${runs[0]!.sessionId}.jsonl`, `${runs[1]!.sessionId}.jsonl`].sort(),
    );
    expect(fake.sent).toEqual([]);
  });

  it('runs a job with session "main" in the agent\'s main session, continuing its conversation', async () => {
    const { gw, client } = await setup();
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "m",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "first",
      session: "main",
    });
    await client.call("cron.run", { id: job.id });
    await runsOf(gw, job.id, 1);
    await client.call("cron.update", { id: job.id, patch: { message: "second" } });
    await client.call("cron.run", { id: job.id });
    const runs = await runsOf(gw, job.id, 2);
    expect(runs.map((r) => r.sessionKey)).toEqual(["agent:main:main", "agent:main:main"]);
    expect(runs[0]!.sessionId).toBe(runs[1]!.sessionId);
    const history = await client.call<{ messages: Array<{ role: string }> }>("chat.history", { sessionKey: "main" });
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const { job: keyed } = await client.call<{ job: CronJob }>("cron.add", {
      name: "k",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "hi",
      session: "cron:Shared-Digest",
    });
    await client.call("cron.run", { id: keyed.id });
    expect((await runsOf(gw, keyed.id, 1))[0]!.sessionKey).toBe("agent:main:cron:shared-digest");
  });

  it("accepts a Discord target and records the outbox's clear failure when no Discord adapter runs", async () => {
    const { gw, client } = await setup({ model: createScriptedModel([{ text: "hello discord" }]) });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "d",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "hi",
      delivery: { mode: "announce", to: "discord:channel:123" },
    });
    await client.call("cron.run", { id: job.id });
    const [run] = await runsOf(gw, job.id, 1);
    expect(run).toMatchObject({
      status: "ok",
      delivered: false,
      delivery: "failed",
      error: expect.stringContaining('No adapter for channel "discord"'),
    });
  });

  it("names the field of a bad job", async () => {
    const { client } = await setup();
    await expect(
      client.call("cron.add", { name: "x", schedule: { kind: "cron", expr: "0 8 * *" }, message: "m" }),
    ).rejects.toThrow(/schedule.expr: must have 5 fields/);
    await expect(
      client.call("cron.add", {
        name: "x",
        schedule: { kind: "cron", expr: "0 8 * * *", tz: "Mars/Base" },
        message: "m",
      }),
    ).rejects.toThrow(/schedule.tz: must be an IANA time zone/);
    await expect(
      client.call("cron.add", {
        name: "x",
        schedule: { kind: "every", everyMs: 60_000 },
        message: "m",
        delivery: { mode: "announce", to: "nochannel" },
      }),
    ).rejects.toThrow(/delivery.to: "nochannel" is not a delivery target/);
    await expect(
      client.call("cron.add", {
        name: "x",
        schedule: { kind: "every", everyMs: 60_000 },
        message: "m",
        agentId: "ghost",
      }),
    ).rejects.toThrow(/agentId: unknown agent "ghost"/);
    await expect(client.call("cron.run", { id: "nope" })).rejects.toThrow(/unknown cron job "nope"/);
  });

  it("adds, lists, runs and shows the runs of a job from the CLI", async () => {
    const { fake, gw, home } = await setup({ model: createScriptedModel([{ text: "Good morning!" }]) });
    const url = gw.gateway.url;
    const added = await cli(
      [
        "cron",
        "add",
        "--name",
        "brief",
        "--cron",
        "0 8 * * *",
        "--tz",
        "Europe/Berlin",
        "--message",
        "Summarise my inbox",
        "--announce",
        "telegram:111",
        "--json",
        "--url",
        url,
      ],
      { home },
    );
    expect(added.code).toBe(0);
    const { job } = JSON.parse(added.stdout) as { job: CronJob };
    expect(job).toMatchObject({
      name: "brief",
      schedule: { kind: "cron", expr: "0 8 * * *", tz: "Europe/Berlin" },
      delivery: { mode: "announce", to: "telegram:111" },
    });
    const listed = await cli(["cron", "list", "--url", url], { home });
    expect(listed.stdout).toContain(`${job.id}  brief  cron "0 8 * * *" Europe/Berlin  next `);
    const ran = await cli(["cron", "run", job.id, "--wait", "--json", "--url", url], { home });
    expect(ran.code).toBe(0);
    const { runId, status } = JSON.parse(ran.stdout) as { runId: string; status: string };
    expect(status).toBe("ok");
    await expect
      .poll(() => where(fake), { timeout: 10_000 })
      .toEqual([{ chatId: "111", threadId: undefined, text: "Good morning!" }]);
    await runsOf(gw, job.id, 1);
    const runs = await cli(["cron", "runs", job.id, "--json", "--url", url], { home });
    expect(JSON.parse(runs.stdout).runs).toEqual([expect.objectContaining({ runId, status: "ok", delivered: true })]);
    const edited = await cli(["cron", "edit", job.id, "--every", "2h", "--no-announce", "--json", "--url", url], {
      home,
    });
    expect(JSON.parse(edited.stdout).job).toMatchObject({
      schedule: { kind: "every", everyMs: 7_200_000 },
      delivery: { mode: "none" },
      name: "brief",
    });
    expect((await cli(["cron", "rm", job.id, "--url", url], { home })).stdout).toBe(`removed ${job.id}\n`);
    const missing = await cli(["cron", "run", job.id, "--url", url], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`NOT_FOUND: unknown cron job "${job.id}"`);
  });

  it("lists the jobs with their next run in their time zone for an owner's /cron, runs one on /cron run, and refuses others", async () => {
    const { fake, client } = await setup();
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "brief",
      schedule: { kind: "cron", expr: "0 8 * * *", tz: "Europe/Berlin" },
      message: "Summarise",
      delivery: { mode: "announce", to: "telegram:111" },
    });
    fake.push(dmFrom(111, "/cron"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const next = new Date(job.state.nextRunAt!);
    const berlin = new Intl.DateTimeFormat("sv-SE", {
      timeZone: "Europe/Berlin",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    }).format(next);
    expect(berlin.endsWith("08:00")).toBe(true);
    expect(fake.sent[0]!.text).toBe(
      [
        STRINGS.cronTitle(1),
        `• brief [${job.id}] cron "0 8 * * *" Europe/Berlin; next ${berlin} Europe/Berlin; last never; announce telegram:111`,
      ].join("\n"),
    );
    fake.push(dmFrom(222, "/cron"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[1]).toMatchObject({ chatId: "222", text: STRINGS.refusedOwner("/cron") });
    fake.push(dmFrom(111, `/cron run ${job.id}`));
    await expect
      .poll(() => fake.sent.map((s) => s.text).slice(2), { timeout: 10_000 })
      .toEqual([expect.stringMatching(new RegExp(`^Started ${job.id} \\(run `)), "Echo: Summarise"]);
    fake.push(dmFrom(111, `/cron disable ${job.id}`));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(5);
    expect(fake.sent[4]!.text).toBe(STRINGS.cronEnabled(job.id, false));
    fake.push(dmFrom(111, "/cron"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(6);
    expect(fake.sent[5]!.text).toContain(`cron "0 8 * * *" Europe/Berlin; disabled; last ok;`);
    fake.push(dmFrom(111, `/cron rm ${job.id}`));
    fake.push(dmFrom(111, `/cron rm ${job.id}`));
    await expect
      .poll(() => fake.sent.map((s) => s.text).slice(6), { timeout: 10_000 })
      .toEqual([STRINGS.cronRemoved(job.id), STRINGS.cronUnknown(job.id)]);
  });

  it("runs a job's turns on its own model, leaving the agent's model alone", async () => {
    const { fake, gw, client } = await setup({
      models: { "test/cheap": createScriptedModel([{ text: "from the cheap model" }]) },
    });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "c",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "hi",
      model: "test/cheap",
      delivery: { mode: "announce", to: "telegram:111" },
    });
    await client.call("cron.run", { id: job.id });
    await runsOf(gw, job.id, 1);
    await expect.poll(() => fake.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["from the cheap model"]);
    const { runId } = await client.call<{ runId: string }>("agent", { message: "and you?" });
    expect(await client.call("agent.wait", { runId })).toMatchObject({ status: "ok", text: "Echo: and you?" });
  });

  it("keeps jobs across a restart and runs one missed while the gateway was down once at start", async () => {
    const first = await setup({ model: createScriptedModel([]) });
    const { job } = await first.client.call<{ job: CronJob }>("cron.add", {
      name: "tick",
      schedule: { kind: "every", everyMs: 1000 },
      message: "tick",
      delivery: { mode: "announce", to: "telegram:111" },
    });
    await first.gw.close();
    cleanups.splice(cleanups.indexOf(first.gw.close), 1);
    // The gateway comes back 3.5 s later by its clock: three slots missed.
    const second = await setup({
      home: first.home,
      now: () => Date.now() + 3_500,
      model: createScriptedModel([{ text: "caught up" }, { text: "on time" }]),
    });
    await expect.poll(() => second.fake.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["caught up", "on time"]);
    await second.gw.gateway.core.cron.update(job.id, { enabled: false });
    await second.gw.gateway.core.cron.idle();
    const { runs } = await second.client.call<{ runs: CronRunRecord[] }>("cron.runs", { id: job.id });
    // Oldest first: one catch-up for the three missed slots, then the schedule again.
    expect(runs.reverse().map((r) => r.trigger)).toEqual(["catch-up", ...runs.slice(1).map(() => "schedule")]);
  });

  it("records a turn that outlives the job's timeout as a failed run and backs the job off", async () => {
    const { gw, client, fake } = await setup({ model: createScriptedModel([{ text: "too late", delayMs: 3000 }]) });
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "slow",
      schedule: { kind: "every", everyMs: 1000 },
      message: "hurry",
      timeoutSeconds: 1,
      delivery: { mode: "announce", to: "telegram:111" },
    });
    const [run] = await runsOf(gw, job.id, 1);
    expect(run).toMatchObject({ status: "timeout", delivered: false });
    const [listed] = (await client.call<{ jobs: CronJob[] }>("cron.list", {})).jobs;
    expect(listed!.state).toMatchObject({ consecutiveFailures: 1, lastStatus: "timeout" });
    expect(listed!.state.nextRunAt! - run!.endedAt).toBeGreaterThanOrEqual(30_000);
    expect(fake.sent).toEqual([]);
  });
});
