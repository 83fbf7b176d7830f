import { appendFile, type FileHandle, mkdir, open, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../logger.js";
import { CronRunStatusSchema } from "./cron-job.js";
import { writeFileAtomic } from "../state/atomic-json-file.js";

/** One finished run of a job, one JSON line in `cron/runs/<jobId>.jsonl`. */
const CronRunRecordSchema = z.looseObject({
  jobId: z.string(),
  runId: z.string(),
  /** ms */
  startedAt: z.number(),
  endedAt: z.number(),
  status: CronRunStatusSchema,
  error: z.string().optional(),
  sessionKey: z.string().optional(),
  sessionId: z.string().optional(),
  /** the reply reached the delivery gate and was delivered or queued for retry */
  delivered: z.boolean(),
  /** the gate's verdict: delivered, queued, denied, failed; or skipped (ANNOUNCE_SKIP, empty), none */
  delivery: z.string().optional(),
  /** why it ran: schedule, catch-up (missed while the gateway was down), manual */
  trigger: z.enum(["schedule", "catch-up", "manual"]).optional(),
});
export type CronRunRecord = z.infer<typeof CronRunRecordSchema>;

/** Why a run started. */
export type CronTrigger = NonNullable<CronRunRecord["trigger"]>;

/** What running a job produced (the executor's answer). */
export type CronRunOutcome = Pick<
  CronRunRecord,
  "status" | "error" | "sessionKey" | "sessionId" | "delivered" | "delivery"
>;

/** Dependencies of {@link createCronRunLog}. */
export interface CronRunLogDeps {
  /** `$SWITCHBOARD_HOME/cron/runs` */
  dir: string;
  /** a log over this size keeps its newest half */
  maxBytes: number;
  logger: Logger;
}

/** Keeps the newest half of a log (less, while that is still over half of `maxBytes`). */
async function trimLog(file: string, maxBytes: number): Promise<void> {
  const lines = (await readFile(file, "utf8")).split("\n").filter(Boolean);
  let kept = lines.slice(Math.floor(lines.length / 2));
  while (kept.length > 1 && Buffer.byteLength(kept.join("\n")) > maxBytes / 2)
    kept = kept.slice(Math.ceil(kept.length / 2));
  await writeFileAtomic(file, `${kept.join("\n")}\n`);
}

/** True when the file is missing, empty or ends with a newline (not a line a crash tore). */
async function endsClean(file: string): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

/** The newest `limit` records in a log's text, newest first; unreadable lines are skipped. */
function newestRecords(text: string, limit: number, onBadLine: (err: unknown) => void): CronRunRecord[] {
  const records: CronRunRecord[] = [];
  for (const line of text.split("\n").reverse()) {
    if (!line.trim()) continue;
    try {
      const parsed = CronRunRecordSchema.safeParse(JSON.parse(line));
      if (parsed.success) records.push(parsed.data);
    } catch (err) {
      onBadLine(err);
    }
    if (records.length >= limit) break;
  }
  return records;
}

/** Per-job run logs, appended after each run and capped in size. */
export function createCronRunLog(deps: CronRunLogDeps) {
  const fileOf = (jobId: string) => path.join(deps.dir, `${jobId}.jsonl`);
  return {
    fileOf,
    /** Appends one record; a log that grew past `maxBytes` drops its oldest half. */
    async append(record: CronRunRecord): Promise<void> {
      const file = fileOf(record.jobId);
      await mkdir(deps.dir, { recursive: true });
      // A line torn by a crash is closed first, so this record starts on a line of its own.
      const lead = (await endsClean(file)) ? "" : "\n";
      await appendFile(file, `${lead}${JSON.stringify(record)}\n`, "utf8");
      if ((await stat(file)).size > deps.maxBytes) await trimLog(file, deps.maxBytes);
    },
    /** The newest `limit` records of a job, newest first; unreadable lines are skipped. */
    async read(jobId: string, limit = 50): Promise<CronRunRecord[]> {
      let text: string;
      try {
        text = await readFile(fileOf(jobId), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw err;
      }
      // A line torn by a crash mid-append: skipped, the rest of the log still reads.
      return newestRecords(text, limit, (err) =>
        deps.logger.warn({ jobId, err }, "cron run log line skipped: not JSON"),
      );
    },
  };
}

/** The run logs. */
export type CronRunLog = ReturnType<typeof createCronRunLog>;
