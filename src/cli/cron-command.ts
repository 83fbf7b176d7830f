import type { Command } from "commander";
import type { CronJob } from "../cron/cron-job.js";
import { CRON_NAME_RULE, isOneLineName, shownName } from "../cron/cron-name.js";
import type { CronRunRecord } from "../cron/cron-run-log.js";
import { type CliIo, CliExit, ExitCode, err, out } from "./cli-io.js";
import { connectCli, printJson } from "./connect-cli.js";
import { listCronJobs } from "./cron-jobs-offline.js";

interface JobFlags {
  name?: string;
  cron?: string;
  tz?: string;
  every?: string;
  at?: string;
  message?: string;
  agent?: string;
  session?: string;
  model?: string;
  timeout?: string;
  announce?: string | false;
  keep?: boolean;
  disabled?: boolean;
  enable?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `10m`, `2h`, `1d` to ms; undefined when unreadable. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  return match ? Number(match[1]) * UNITS[match[2]!]! : undefined;
}

function usage(io: CliIo, message: string): never {
  err(io, message);
  throw new CliExit(ExitCode.badInput);
}

/** The schedule the flags describe (exactly one of --cron, --every, --at), or undefined when none is given. */
function scheduleOf(io: CliIo, flags: JobFlags, now: number): Record<string, unknown> | undefined {
  const given = [flags.cron, flags.every, flags.at].filter((f) => f !== undefined).length;
  if (given > 1) usage(io, "give one of --cron, --every, --at");
  if (flags.tz !== undefined && flags.cron === undefined) usage(io, "--tz needs --cron");
  if (flags.cron !== undefined) return { kind: "cron", expr: flags.cron, ...(flags.tz && { tz: flags.tz }) };
  if (flags.every !== undefined) {
    const everyMs = parseDuration(flags.every);
    if (everyMs === undefined) usage(io, `--every: "${flags.every}" is not a duration such as 30s, 10m, 2h, 1d`);
    // The job schema's floor (everyMs >= 1000), said in the flag's own words.
    return everyMs < 1000
      ? usage(io, `--every: "${flags.every}" is too short; the shortest interval is 1s`)
      : { kind: "every", everyMs };
  }
  if (flags.at !== undefined) {
    const relative = flags.at.startsWith("+") ? parseDuration(flags.at.slice(1)) : undefined;
    const atMs = relative !== undefined ? now + relative : Date.parse(flags.at);
    return Number.isNaN(atMs)
      ? usage(io, `--at: "${flags.at}" is neither an ISO time (2026-12-24T18:00:00+01:00) nor +<duration> (+20m)`)
      : { kind: "at", atMs };
  }
  return undefined;
}

/** The job fields the flags set (only those given). */
function fieldsOf(io: CliIo, flags: JobFlags, now: number): Record<string, unknown> {
  // One job is one line of `cron list`.
  if (flags.name !== undefined && !isOneLineName(flags.name))
    usage(io, `--name ${CRON_NAME_RULE} (got ${JSON.stringify(flags.name)})`);
  const schedule = scheduleOf(io, flags, now);
  const timeout = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
    usage(io, `--timeout: "${flags.timeout}" is not a number of seconds`);
  return {
    ...(flags.name !== undefined && { name: flags.name }),
    ...(schedule && { schedule }),
    ...(flags.message !== undefined && { message: flags.message }),
    ...(flags.agent !== undefined && { agentId: flags.agent }),
    ...(flags.session !== undefined && { session: flags.session }),
    ...(flags.model !== undefined && { model: flags.model }),
    ...(timeout !== undefined && { timeoutSeconds: timeout }),
    ...(typeof flags.announce === "string" && { delivery: { mode: "announce", to: flags.announce } }),
    ...(flags.announce === false && { delivery: { mode: "none" } }),
    ...(flags.keep && { keepAfterRun: true }),
    ...(flags.disabled && { enabled: false }),
    ...(flags.enable && { enabled: true }),
  };
}

function describeSchedule(job: CronJob): string {
  const s = job.schedule;
  if (s.kind === "cron") return `cron "${s.expr}" ${s.tz}`;
  if (s.kind === "every") return `every ${s.everyMs / 1000}s`;
  return `at ${new Date(s.atMs).toISOString()}`;
}

function describeJob(job: CronJob): string {
  // A name stored before names were checked may hold a newline or a bidi override: quoted and escaped.
  const name = shownName(job.name);
  const next = job.enabled && job.state.nextRunAt !== undefined ? new Date(job.state.nextRunAt).toISOString() : "-";
  const last = job.state.lastStatus
    ? `${job.state.lastStatus}${job.state.lastError ? ` (${job.state.lastError})` : ""}`
    : "never";
  const to = job.delivery.mode === "announce" ? job.delivery.to : "none";
  return `${job.id}  ${name}  ${describeSchedule(job)}  next ${next}  last ${last}  announce ${to}${job.enabled ? "" : "  (disabled)"}`;
}

function describeRun(run: CronRunRecord): string {
  const seconds = ((run.endedAt - run.startedAt) / 1000).toFixed(1);
  return `${new Date(run.startedAt).toISOString()}  ${run.status}  ${seconds}s  delivery ${run.delivery ?? (run.delivered ? "delivered" : "none")}  run ${run.runId}${run.error ? `  ${run.error}` : ""}`;
}

function withJobFlags(command: Command): Command {
  return command
    .option("--name <name>", "job name")
    .option("--cron <expr>", '5-field cron expression, e.g. "0 8 * * *"')
    .option("--tz <zone>", "IANA time zone for --cron (default UTC), e.g. Europe/Berlin")
    .option("--every <duration>", "interval: 30s, 10m, 2h, 1d")
    .option("--at <time>", "once: ISO time or +<duration>")
    .option("--message <text>", "what the agent is asked each run")
    .option("--agent <id>", "agent id (default the default agent)")
    .option("--session <target>", "isolated (default), main, or a session key")
    .option("--model <ref>", "provider/model or alias for this job")
    .option("--timeout <seconds>", "turn timeout")
    .option(
      "--announce <target>",
      "deliver the reply: telegram:<chatId>[:topic:<n>], discord:channel:<id>, whatsapp:+<n>, or last",
    )
    .option("--no-announce", "deliver nothing")
    .option("--keep", "keep a one-shot job after it succeeded")
    .option("--json", "print JSON");
}

function withGateway(command: Command): Command {
  return command
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token");
}

/** One gateway call on a connection of its own, closed after. */
async function callGateway<T>(io: CliIo, cmd: Command, flags: JobFlags, method: string, params: unknown): Promise<T> {
  const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
  try {
    return await client.call<T>(method, params);
  } finally {
    await client.close();
  }
}

function registerList(cron: Command, io: CliIo): void {
  withGateway(
    cron
      .command("list")
      .description("jobs with their next run (from the state when no gateway runs)")
      .option("--json", "print JSON"),
  ).action(async (flags: JobFlags, cmd: Command) => {
    const jobs = await listCronJobs(io, cmd.optsWithGlobals().config, flags);
    if (flags.json) return printJson(io, { jobs });
    if (jobs.length === 0)
      return out(
        io,
        'No cron jobs. Add one with: switchboard cron add --name brief --cron "0 8 * * *" --message "..."',
      );
    for (const job of jobs) out(io, describeJob(job));
  });
}

function registerAdd(cron: Command, io: CliIo, now: () => number): void {
  withGateway(
    withJobFlags(cron.command("add").description("add a job")).option("--disabled", "add it disabled"),
  ).action(async (flags: JobFlags, cmd: Command) => {
    const fields = fieldsOf(io, flags, now());
    if (!fields.name || !fields.schedule || !fields.message)
      usage(io, "cron add needs --name, --message and one of --cron, --every, --at");
    const { job } = await callGateway<{ job: CronJob }>(io, cmd, flags, "cron.add", fields);
    if (flags.json) printJson(io, { job });
    else out(io, `added ${describeJob(job)}`);
  });
}

function registerEdit(cron: Command, io: CliIo, now: () => number): void {
  withGateway(
    withJobFlags(cron.command("edit <id>").description("change a job's fields"))
      .option("--enable", "enable")
      .option("--disable", "disable"),
  ).action(async (id: string, flags: JobFlags & { disable?: boolean }, cmd: Command) => {
    const fields = fieldsOf(io, { ...flags, disabled: flags.disable ?? false }, now());
    if (Object.keys(fields).length === 0)
      usage(io, "cron edit: nothing to change (give a flag such as --message or --cron)");
    const { job } = await callGateway<{ job: CronJob }>(io, cmd, flags, "cron.update", { id, patch: fields });
    if (flags.json) printJson(io, { job });
    else out(io, `updated ${describeJob(job)}`);
  });
}

function registerRm(cron: Command, io: CliIo): void {
  withGateway(cron.command("rm <id>").description("remove a job").option("--json", "print JSON")).action(
    async (id: string, flags: JobFlags, cmd: Command) => {
      const result = await callGateway(io, cmd, flags, "cron.remove", { id });
      if (flags.json) printJson(io, result);
      else out(io, `removed ${id}`);
    },
  );
}

type RunEnd = { status: string; error?: string };

/** Prints a started run, and how it ended when `--wait` waited for it. */
function printRun(io: CliIo, json: boolean | undefined, started: { runId: string }, ended: RunEnd | undefined): void {
  if (json)
    printJson(io, {
      ...started,
      ...(ended && { status: ended.status, ...(ended.error && { error: ended.error }) }),
    });
  else
    out(
      io,
      ended
        ? `run ${started.runId}: ${ended.status}${ended.error ? ` (${ended.error})` : ""}`
        : `started run ${started.runId}`,
    );
}

function registerRun(cron: Command, io: CliIo): void {
  withGateway(
    cron
      .command("run <id>")
      .description("run a job now; prints the runId")
      .option("--wait", "wait for the run to end")
      .option("--json", "print JSON"),
  ).action(async (id: string, flags: JobFlags & { wait?: boolean }, cmd: Command) => {
    const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
    try {
      const started = await client.call<{ runId: string }>("cron.run", { id });
      const ended = flags.wait
        ? await client.call<RunEnd>("agent.wait", { runId: started.runId, timeoutMs: 3_600_000 })
        : undefined;
      printRun(io, flags.json, started, ended);
      if (ended && ended.status !== "ok") throw new CliExit(ExitCode.failure);
    } finally {
      await client.close();
    }
  });
}

function registerRuns(cron: Command, io: CliIo): void {
  withGateway(
    cron
      .command("runs <id>")
      .description("a job's recent runs, newest first")
      .option("--limit <n>", "how many", "20")
      .option("--json", "print JSON"),
  ).action(async (id: string, flags: JobFlags & { limit: string }, cmd: Command) => {
    const limit = Number(flags.limit);
    if (!(Number.isInteger(limit) && limit > 0)) usage(io, `--limit: "${flags.limit}" is not a positive number`);
    const { runs } = await callGateway<{ runs: CronRunRecord[] }>(io, cmd, flags, "cron.runs", { id, limit });
    if (flags.json) return printJson(io, { id, runs });
    if (runs.length === 0) return out(io, `No runs of ${id} yet.`);
    for (const run of runs) out(io, describeRun(run));
  });
}

/** `switchboard cron list|add|edit|rm|run|runs`: manages the gateway's scheduled jobs. */
export function registerCronCommand(program: Command, io: CliIo, now: () => number): void {
  const cron = program.command("cron").description("scheduled jobs: list, add, edit, rm, run, runs");
  registerList(cron, io);
  registerAdd(cron, io, now);
  registerEdit(cron, io, now);
  registerRm(cron, io);
  registerRun(cron, io);
  registerRuns(cron, io);
}
