import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../../src/config/index.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { resolveStorePath } from "../../../src/config/paths.js";
import { openCronJobStore } from "../../../src/cron/cron-job-store.js";
import { createOutbox } from "../../../src/delivery/outbox.js";
import { createInbox } from "../../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { type OpenTranscripts, createAgentSessionsPool } from "../../../src/sessions/agent-sessions.js";
import { openStateBackend } from "../../../src/state/open-state-backend.js";
import { openChannelStates } from "../../../src/state/channel-state.js";
import { openCronRunLog } from "../../../src/cron/cron-run-log.js";
import { postgresTranscriptsOpener } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { storedCronJob, writeCronJobsFile } from "../../support/cron-jobs-file.js";
import { telegramDm } from "../../support/telegram-dm.js";

/** Writes the home's config file and returns the parsed config. */
export async function writeConfig(home: string, state: object): Promise<Config> {
  const file = path.join(home, "switchboard.json5");
  await writeFile(file, JSON.stringify({ state }));
  return (await loadConfig(file)).config;
}

/** The home's state opened as the gateway opens it (`openStateBackend`, the backend's transcripts). */
export async function openAsGateway(home: string, config: Config) {
  const logger = createMemoryLogger();
  const backend = await openStateBackend({ config: config.state, env: {}, dir: path.join(home, "state"), logger });
  const openTranscripts: OpenTranscripts | undefined = backend.database && postgresTranscriptsOpener(backend.database);
  const sessions = createAgentSessionsPool({
    state: backend.state,
    session: config.session,
    logger,
    ...(openTranscripts && { openTranscripts }),
    storePathFor: (agentId) => resolveStorePath(home, agentId, config.session.store, home),
  });
  const inbox = await createInbox({ state: backend.state, path: path.join(home, "state", "inbox.json"), logger });
  const outbox = await createOutbox({ state: backend.state, path: path.join(home, "state", "outbox.json") });
  const cron = await openCronJobStore({ state: backend.state, file: path.join(home, "cron", "jobs.json"), logger });
  const channels = await openChannelStates(backend.state, { file: path.join(home, "state", "channels.json") });
  const runs = await openCronRunLog({
    state: backend.state,
    file: path.join(home, "state", "cron-runs.json"),
    legacyDir: path.join(home, "cron", "runs"),
    maxBytes: 1_000_000,
    logger,
  });
  return {
    cron,
    channels,
    runs,
    main: await sessions.forAgent("main"),
    inbox,
    outbox,
    async close() {
      await Promise.all([
        sessions.close(),
        inbox.close(),
        outbox.close(),
        cron.close(),
        channels.close(),
        runs.close(),
      ]);
      await backend.state.close();
    },
  };
}

const dm = telegramDm("are you there?", { messageId: "7" });

/** A local home with two sessions and their transcripts (one with a tool call), an archived transcript, an inbox entry, an outbox item and two workspace files. */
export async function seedLocalHome(home: string, config: Config): Promise<void> {
  const opened = await openAsGateway(home, config);
  const { store, transcripts } = opened.main;
  await store.patch("agent:main:main", () => ({ sessionId: "s-main", updatedAt: 1_000 }));
  await store.patch("agent:main:telegram:dm:42", () => ({ sessionId: "s-dm", updatedAt: 2_000 }));
  await transcripts.append("s-main", { role: "user", content: "hello", timestamp: 10 });
  await transcripts.append("s-main", { role: "assistant", content: [{ type: "text", text: "hi!" }], timestamp: 11 });
  await transcripts.append("s-dm", { role: "user", content: "what time is it?", timestamp: 20 });
  const call = { type: "toolCall", id: "c1", name: "clock", arguments: {} };
  await transcripts.append("s-dm", { role: "toolCall", content: [call], timestamp: 21 });
  await transcripts.append("s-dm", { role: "assistant", content: "noon", timestamp: 22 });
  await transcripts.append("s-old", { role: "user", content: "before the reset", timestamp: 5 });
  await transcripts.remove("s-old", { now: 6 });
  await opened.inbox.claim("telegram:default:42:7", dm, { runId: "run-7" });
  const target = { channel: "telegram", to: "42" };
  await opened.outbox.enqueue({
    id: "out-1",
    sessionKey: "agent:main:telegram:dm:42",
    target,
    kind: "reply",
    chunks: ["noon"],
  });
  // What adapters keep (Telegram's offset, WhatsApp's credentials and keys) and two cron runs.
  await opened.channels
    .forChannel("telegram")
    .rows("default")
    .write({ offset: { version: 1, botId: 1, lastUpdateId: 99 } });
  const whatsapp = opened.channels.forChannel("whatsapp").rows("default");
  await whatsapp.write({
    creds: { me: { id: "15550001111@s.whatsapp.net" } },
    "pre-key-1": { k: 1 },
    "pre-key-2": { k: 2 },
  });
  for (const runId of ["run-1", "run-2"])
    await opened.runs.append({ jobId: "daily", runId, startedAt: 1, endedAt: 2, status: "ok", delivered: false });
  await opened.close();
  const workspace = path.join(home, "agents", "main", "workspace");
  await mkdir(path.join(workspace, "memory"), { recursive: true });
  await writeFile(path.join(workspace, "MEMORY.md"), "likes tea\n");
  await writeFile(path.join(workspace, "memory", "2026-11-26.md"), "asked the time\n");
  // Cron jobs in an earlier version's whole-file format: the migrator reads them as rows.
  await writeCronJobsFile(home, [dailyJob]);
}

const dailyJob = storedCronJob({
  id: "daily",
  name: "daily summary",
  schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" },
  message: "summarize",
});
