// A gateway in its own process, for tests that SIGKILL it. A file-backed fake Telegram adapter
// appends every accepted send to <home>/sent.jsonl; announces can be held back to widen the
// window between handing an announce to the outbox and delivering it. Env:
//   SB_HOME            state directory
//   SB_INJECT=1        inject one forum-topic message that asks for a spawn
//   SB_WORKER_STEPS    JSON array of scripted steps for the worker agent
//   SB_ANNOUNCE_DELAY  ms an announce send waits before it is accepted
//   SB_ANNOUNCE_HOLD   ms an announce send waits after it was accepted (the platform has it, we don't know)
//   SB_DEDUPE=1        the platform drops a send whose idempotency key it has seen (like Discord's nonce)
//   SB_STATE           optional JSON: the config's `state` section (e.g. the "postgres" backend)
//   SB_KILL_AT_STORED  a stored turn's source (`spawn`, `announce`, `abort`): SIGKILL right after the first such
//                      turn is stored, before its runner runs
// Each call of the worker's model is appended to <home>/worker-calls.jsonl as "task" or "announce".
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseConfig } from "../../src/config/index.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import { opaqueTargetCodec } from "../../src/delivery/delivery-target.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
import { createLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createScriptedModel } from "./scripted-model.js";
import { answerIdleRequests } from "./answer-idle.js";

const home = process.env.SB_HOME!;
const announceDelay = Number(process.env.SB_ANNOUNCE_DELAY ?? 0);
const announceHold = Number(process.env.SB_ANNOUNCE_HOLD ?? 0);
const dedupe = process.env.SB_DEDUPE === "1";
const sentFile = path.join(home, "sent.jsonl");
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let sent = 0;
const adapter: ChannelAdapter = {
  id: "telegram",
  capabilities: {
    maxTextLength: 4000,
    typing: false,
    nativeCommands: false,
    deduplicatesSends: dedupe,
    gatewayClients: false,
  },
  targets: opaqueTargetCodec("telegram"),
  start: async () => undefined,
  stop: async () => undefined,
  async send(target, message) {
    const announce = message.text.includes("Status:");
    if (announce && announceDelay > 0) await wait(announceDelay);
    const seen =
      dedupe &&
      readFileSync(sentFile, { encoding: "utf8", flag: "a+" }).includes(
        `"key":${JSON.stringify(message.idempotencyKey)}`,
      );
    if (!seen)
      appendFileSync(sentFile, `${JSON.stringify({ target, text: message.text, key: message.idempotencyKey })}\n`);
    if (announce && announceHold > 0) await wait(announceHold);
    return { messageIds: [`m${++sent}`] };
  },
};
const main = createScriptedModel([
  { toolCalls: [{ name: "sessions_spawn", input: { task: "research X", agentId: "worker" } }] },
  { text: "on it" },
]);
const worker = createScriptedModel(JSON.parse(process.env.SB_WORKER_STEPS ?? "[]"));
worker.calls.push = (...calls) => {
  for (const call of calls) {
    const kind = JSON.stringify(call.prompt).includes("Sub-agent announce step.") ? "announce" : "task";
    appendFileSync(path.join(home, "worker-calls.jsonl"), `${JSON.stringify(kind)}\n`);
  }
  return Array.prototype.push.apply(worker.calls, calls);
};
const { config } = parseConfig({
  agents: {
    list: [
      { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["worker"] } },
      { id: "worker", model: "test/worker" },
    ],
  },
  channels: { telegram: { groupPolicy: "open", groups: { "*": { requireMention: false } } } },
  ...(process.env.SB_STATE && { state: JSON.parse(process.env.SB_STATE) }),
});
const gateway = await startGateway({
  config,
  home,
  homeDir: home,
  logger: createLogger("warn"),
  port: 0,
  adapters: [adapter],
  resolveModel: (ref) => ({ model: ref === "test/worker" ? worker : main, ref, offline: false }),
  retry: { minDelayMs: 20, maxDelayMs: 100 },
});
killAtStored(process.env.SB_KILL_AT_STORED);
process.stdout.write(`url ${gateway.url}\n`);
answerIdleRequests({ idle: () => (gateway.idle ? gateway.idle() : gateway.core.idle()) });
if (process.env.SB_INJECT === "1") {
  const message = InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "group", id: "-100", isForum: true, threadId: "7", title: "Team" },
    sender: { id: "42" },
    messageId: "m1",
    text: "please research X",
  });
  await gateway.core.pipeline.handleInbound(message);
}
/** The failpoint SB_KILL_AT_STORED: the first turn of `source` stored, the process dies before it runs. */
function killAtStored(source: string | undefined): void {
  if (!source) return;
  const inbox = gateway.core.inbox;
  const claimTurn = inbox.claimTurn;
  inbox.claimTurn = async (...args) => {
    const claim = await claimTurn(...args);
    if (claim.status === "new" && args[1].source === source) process.kill(process.pid, "SIGKILL");
    return claim;
  };
}
process.once("SIGTERM", () => void gateway.close().then(() => process.exit(0)));
