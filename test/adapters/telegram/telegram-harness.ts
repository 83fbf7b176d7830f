// A started Telegram adapter against the fake Bot API, for adapter tests and the contract suite.
import { Api } from "grammy";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createTelegramAdapter } from "../../../adapters/telegram/index.js";
import type { NativeCommand } from "../../../adapters/telegram/native-commands.js";
import { type PollBackoff, pollUpdates } from "../../../adapters/telegram/poll-updates.js";
import { TelegramConfigSchema } from "../../../adapters/telegram/telegram-config.js";
import type { InboundMessage, Logger } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import type { ContractFailure, ContractLive, ContractPlatform } from "../../contracts/adapter-contract.js";
import { type FakeBot, type FakeFailure, TEST_BOT, startFakeTelegramServer } from "../../fakes/fake-telegram-server.js";
import { receivedMessages, testStartContext } from "../../support/channel-context.js";
import { closedAfterEach } from "../../support/closed-after-each.js";

/** Options of {@link startTelegramHarness}. */
export interface HarnessOptions {
  /** `channels.telegram` fields over `{ botToken: TEST_BOT.token, apiRoot: <fake> }` */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  bots?: FakeBot[];
  home?: string;
  commands?: NativeCommand[];
  forgetConfirmed?: boolean;
  /** default true */
  start?: boolean;
  /** runs before a message counts as received; a rejection means "not stored" */
  beforeReceive?: (message: InboundMessage) => Promise<void>;
  /** what a cluster owner adds to the start context (its hand-off drain as `beforeInbound`) */
  beforeInbound?: () => Promise<void>;
}

/** Starts the fake Bot API and a Telegram adapter on it (fast polls, a temporary home). */
export async function startTelegramHarness(options: HarnessOptions = {}) {
  const fake = await startFakeTelegramServer({
    ...(options.bots && { bots: options.bots }),
    ...(options.forgetConfirmed !== undefined && { forgetConfirmed: options.forgetConfirmed }),
  });
  const home = options.home ?? (await mkdtemp(path.join(os.tmpdir(), "sb-tg-")));
  const logger = createMemoryLogger();
  const { received, sink } = receivedMessages(options.beforeReceive);
  const config = TelegramConfigSchema.parse({ botToken: TEST_BOT.token, apiRoot: fake.apiRoot, ...options.config });
  const adapter = createTelegramAdapter(config, {
    home,
    env: options.env ?? {},
    logger,
    commands: options.commands ?? [],
    pollTimeoutSeconds: 1,
    pollBackoff: { minMs: 20, maxMs: 100 },
  });
  const context = {
    ...(await testStartContext("telegram", home)),
    ...(options.beforeInbound && { beforeInbound: options.beforeInbound }),
  };
  const start = () => adapter.start(sink, context);
  if (options.start !== false) await start();
  return {
    fake,
    adapter,
    home,
    /** the channel state the adapter was started with (its offsets) */
    context,
    logger,
    received,
    start,
    async close() {
      await adapter.stop();
      await fake.close();
    },
  };
}

const FAILURES: Record<ContractFailure, FakeFailure> = {
  rate_limited: { error_code: 429, description: "Too Many Requests: retry after 1", parameters: { retry_after: 1 } },
  chat_not_found: { error_code: 400, description: "Bad Request: chat not found" },
  network: "disconnect",
};

/** The Telegram adapter as the shared contract sees it. */
export async function telegramContractPlatform(): Promise<ContractPlatform> {
  const harness = await startTelegramHarness();
  return {
    adapter: harness.adapter,
    target: { channel: "telegram", to: "111" },
    threadTarget: { channel: "telegram", to: "-1002000000001", threadId: "42" },
    sent: () =>
      harness.fake.sent.map((s) => ({
        to: s.chatId,
        text: s.text,
        ...(s.threadId !== undefined && { threadId: String(s.threadId) }),
      })),
    failNextSend: (failure) => harness.fake.failNext("sendMessage", FAILURES[failure]),
    close: harness.close,
  };
}

/** The Telegram adapter, not started, on the fake Bot API: the contract's live loop. */
export async function telegramContractLive(): Promise<ContractLive> {
  const harness = await startTelegramHarness({ start: false });
  const ada = { id: 111, is_bot: false, first_name: "Ada", username: "ada" };
  const chat = { id: 111, type: "private" as const, first_name: "Ada" };
  let messageId = 500;
  const write = (from: typeof ada | typeof TEST_BOT.info, text: string) => {
    harness.fake.push({ message: { message_id: ++messageId, date: Math.floor(Date.now() / 1000), chat, from, text } });
    return Promise.resolve();
  };
  return {
    adapter: harness.adapter,
    userWrites: (text) => write(ada, text),
    botWrites: (text) => write(TEST_BOT.info, text),
    sent: () => harness.fake.sent.map((s) => ({ to: s.chatId, text: s.text })),
    openConnections: () => harness.fake.openConnections(),
    close: () => harness.fake.close(),
  };
}

/** A started harness as {@link startTelegramHarness} returns it. */
export type TelegramHarness = Awaited<ReturnType<typeof startTelegramHarness>>;

/** Returns a `harness` function whose harnesses are all closed after each test of the calling file. */
export function useTelegramHarness(): (options?: HarnessOptions) => Promise<TelegramHarness> {
  return closedAfterEach(startTelegramHarness);
}

/** A DM from Ada (chat 111) as the fake Bot API hands it over: update `id`, message `text`. */
export const dm = (text: string, id: number) => ({
  message: {
    message_id: id,
    date: 1767225600,
    chat: { id: 111, type: "private" as const, first_name: "Ada" },
    from: { id: 111, is_bot: false, first_name: "Ada" },
    text,
  },
});

/**
 * Polls the fake Bot API at `apiRoot` (bot 1, no stored offset) until `signal` aborts or polling stops
 * on its own, each message's text into `handled`; `mayPoll` is the gateway's guard, when given.
 */
export function pollTexts(
  apiRoot: string,
  options: {
    backoff: PollBackoff;
    logger: Logger;
    signal: AbortSignal;
    handled: string[];
    mayPoll?: () => Promise<boolean>;
  },
): Promise<void> {
  const { backoff, logger, signal, handled, mayPoll } = options;
  return pollUpdates({
    api: new Api(TEST_BOT.token, { apiRoot }),
    botId: 1,
    accountId: "default",
    offsets: { read: async () => undefined, write: async () => undefined },
    timeoutSeconds: 1,
    signal,
    logger,
    backoff,
    handle: async (update) => void handled.push(update.message!.text!),
    ...(mayPoll && { mayPoll }),
  });
}
