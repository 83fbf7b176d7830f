// A gateway in its own process with a real platform adapter (Telegram or Discord) pointed at a fake
// platform server that the test runs, for tests that SIGKILL it mid-burst or stop it with SIGINT. It
// answers "idle" requests on stdin (./answer-idle.ts). Warnings go to stderr as JSON lines. Env:
//   SB_HOME        state directory
//   SB_CHANNEL     "telegram" (default), "discord" or "whatsapp" (its fake in this process: ./whatsapp-child.ts):
//                  the adapter, allowing and owned by the fake's Ada
//   SB_API_ROOT    the fake platform's root URL (Bot API, Discord REST)
//   SB_RETRY       optional JSON: the delivery gate's retry setting (default: 20 to 100 ms backoff)
//   SB_STEPS       optional JSON: scripted model steps (default: the offline echo model)
//   SB_PLAY        optional JSON: playbook rules (./playbook-model.ts) instead: answers by what each turn is asked
//   SB_PLAY_LOG    optional: a file the playbook model appends each call's rule (`when`) to, a JSON line per call
//   SB_CONFIG      optional JSON: config besides channels (e.g. session settings)
//   SB_TELEGRAM    optional JSON: fields over the Telegram channel's settings (e.g. `dmPolicy: "open"` for many chats)
//   SB_WHATSAPP    optional JSON: fields over the WhatsApp channel's settings (e.g. `dmPolicy: "open"` for many chats)
//   SB_HOOK_TOKEN  optional: enables webhooks (`POST /hooks/agent`) with this token (over SB_CONFIG's `hooks`)
//   SB_DIE_ON      optional: a turn whose message contains this text SIGKILLs the process (a poison message)
//   SB_QUEUE       optional JSON: `session.queue`
//   SB_STATE       optional JSON: the config's `state` section (e.g. the "postgres" backend)
//   SB_LOG_LEVEL   optional: the log level (default "warn"), e.g. "info" to see what a test waits for
//   SB_KILL_AT_TURN_COMMIT  optional JSON: a failpoint on PostgreSQL (./kill-at-turn-commit.ts)
//   SB_KILL_AT_HANDOFF_DELETE  optional JSON: a marker file and when; the first in a cluster to commit a hand-off row's delete dies (./kill-at-handoff-delete.ts)
// On PostgreSQL a gateway whose schema another owns prints its "url" as a standby, then "owner" once it took over.
import { appendFileSync } from "node:fs";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "../../src/agents/models/language-model-v3.js";
import type { LanguageModel } from "ai";
import { createConfiguredAdapters } from "../../adapters/index.js";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
import { createLogger } from "../../src/logger.js";
import { DISCORD_BOT, WORLD } from "./fake-discord-server.js";
import { TEST_BOT } from "./fake-telegram-server.js";
import { createPlaybookModel } from "./playbook-model.js";
import { createScriptedModel } from "./scripted-model.js";
import { answerIdleRequests } from "./answer-idle.js";
import { WA_ADA, whatsappInChild } from "./whatsapp-child.js";
import { killAtTurnCommit } from "./kill-at-turn-commit.js";
import { killAtHandoffDelete } from "./kill-at-handoff-delete.js";

killAtTurnCommit(process.env.SB_KILL_AT_TURN_COMMIT);
killAtHandoffDelete(process.env.SB_KILL_AT_HANDOFF_DELETE);

const home = process.env.SB_HOME!;
const apiRoot = process.env.SB_API_ROOT;
const logger = createLogger((process.env.SB_LOG_LEVEL ?? "warn") as "warn");
const settings = JSON.parse(process.env.SB_CONFIG ?? "{}");
const telegram = JSON.parse(process.env.SB_TELEGRAM ?? "{}");
const { config } = parseConfig({
  ...settings,
  channels: channelsOf(process.env.SB_CHANNEL),
  ...(process.env.SB_HOOK_TOKEN && { hooks: { ...settings.hooks, enabled: true, token: process.env.SB_HOOK_TOKEN } }),
  ...(process.env.SB_QUEUE && { session: { queue: JSON.parse(process.env.SB_QUEUE) } }),
  ...(process.env.SB_STATE && { state: JSON.parse(process.env.SB_STATE) }),
});
const table = process.env.SB_CHANNEL === "whatsapp" ? await whatsappInChild(home) : undefined;
const adapters = await createConfiguredAdapters(config, { home, env: {}, logger }, table);
const chosen: LanguageModel = process.env.SB_PLAY
  ? createPlaybookModel(JSON.parse(process.env.SB_PLAY), playLog(process.env.SB_PLAY_LOG))
  : process.env.SB_STEPS
    ? createScriptedModel(JSON.parse(process.env.SB_STEPS))
    : createOfflineModel();
const model = process.env.SB_DIE_ON ? dyingOn(process.env.SB_DIE_ON, chosen) : chosen;
// What `gateway run` does on Ctrl-C and SIGTERM: a graceful stop (a standby on PostgreSQL leaves its cluster).
const stop = new AbortController();
const stopped = new Promise<void>((resolve) => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve(stop.abort()));
});
const gateway = await startGateway({
  config,
  home,
  homeDir: home,
  logger,
  port: 0,
  adapters,
  resolveModel: (ref) => ({ model, ref, offline: !process.env.SB_STEPS && !process.env.SB_PLAY }),
  retry: process.env.SB_RETRY ? JSON.parse(process.env.SB_RETRY) : { minDelayMs: 20, maxDelayMs: 100 },
  signal: stop.signal,
  // A standby's "url" line comes first; "owner" says when it took the schema over.
  onStandby: ({ url }) => process.stdout.write(`url ${url}\n`),
}).catch((err: unknown) => (stop.signal.aborted ? process.exit(0) : Promise.reject(err)));
process.stdout.write(`url ${gateway.url}\nowner\n`);
// Every core of the gateway (a "many" global holder may run two), read when asked: cores come and go.
answerIdleRequests({ idle: () => (gateway.idle ? gateway.idle() : gateway.core.idle()) });
void stopped.then(() => gateway.close().then(() => process.exit(0)));

/** SB_PLAY_LOG: each playbook call's rule appended to `file` (synchronously: a kill right after loses none). */
function playLog(file: string | undefined): ((rule: { when: string }) => void) | undefined {
  return file ? (rule) => appendFileSync(file, `${JSON.stringify(rule.when)}\n`) : undefined;
}

/** The model, except that a turn whose latest user message contains `marker` kills the process at once. */
function dyingOn(marker: string, inner: LanguageModel): LanguageModel {
  const base = inner as LanguageModelV3;
  const check = (options: LanguageModelV3CallOptions) => {
    const last = options.prompt.filter((m) => m.role === "user").at(-1);
    if (last && JSON.stringify(last.content).includes(marker)) process.kill(process.pid, "SIGKILL");
  };
  return {
    ...base,
    doGenerate(options: LanguageModelV3CallOptions) {
      check(options);
      return base.doGenerate(options);
    },
    doStream(options: LanguageModelV3CallOptions) {
      check(options);
      return base.doStream(options);
    },
  };
}

/** The `channels` section: the one channel, allowing and owned by its fake's Ada. */
function channelsOf(channel: string | undefined) {
  if (channel === "discord")
    return { discord: { token: DISCORD_BOT.token, apiRoot, allowFrom: [WORLD.ada.id], owners: [WORLD.ada.id] } };
  if (channel === "whatsapp")
    return {
      whatsapp: { allowFrom: [WA_ADA.e164], owners: [WA_ADA.e164], ...JSON.parse(process.env.SB_WHATSAPP ?? "{}") },
    };
  return { telegram: { botToken: TEST_BOT.token, apiRoot, allowFrom: ["111"], owners: ["111"], ...telegram } };
}
