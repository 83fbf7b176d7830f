// A started Discord adapter against the fake Discord, for adapter tests and the contract suite.
import { createDiscordAdapter } from "../../../adapters/discord/index.js";
import type { NativeCommand } from "../../../adapters/discord/slash-commands.js";
import { DiscordConfigSchema } from "../../../adapters/discord/discord-config.js";
import type { SessionLimits } from "../../../adapters/discord/store-in-order.js";
import type { ReplayClock } from "../../../adapters/discord/replay-session.js";
import type { AdapterStartContext, CommandInteraction, InboundMessage } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import type { ContractFailure, ContractLive, ContractPlatform } from "../../contracts/adapter-contract.js";
import {
  DISCORD_BOT,
  type FakeDiscordFailure,
  type FakeDiscordOptions,
  WORLD,
  startFakeDiscord,
} from "../../fakes/fake-discord-server.js";
import { until } from "../../support/gateway-child.js";
import { testStartContext } from "../../support/channel-context.js";
import { closedAfterEach } from "../../support/closed-after-each.js";

/** Options of {@link startDiscordHarness}. */
export interface DiscordHarnessOptions {
  /** `channels.discord` fields over `{ token: DISCORD_BOT.token, apiRoot: <fake> }` */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  fake?: FakeDiscordOptions;
  commands?: NativeCommand[];
  /** default true */
  start?: boolean;
  /** runs before a message counts as received; a rejection means "not stored" */
  beforeReceive?: (message: InboundMessage) => Promise<void>;
  /** the tries of a message not stored and the freeze after them (short waits keep a test fast) */
  sessionLimits?: SessionLimits;
  /** the clock the replay of a stored session is bounded by (the real one when not given) */
  replayClock?: ReplayClock;
  /** the backoff between logins while Discord is away at start (default: short) */
  loginBackoff?: { minMs: number; maxMs: number };
  /** what the gateway's metrics count the messages the adapter gives up on with */
  inboundLost?: AdapterStartContext["inboundLost"];
}

/** One message the sink received, with the interaction it came with. */
interface Received {
  message: InboundMessage;
  interaction?: CommandInteraction;
}

/** Starts the fake Discord and a Discord adapter on it. */
async function startDiscordHarness(options: DiscordHarnessOptions = {}) {
  const fake = await startFakeDiscord(options.fake);
  const logger = createMemoryLogger();
  const received: Received[] = [];
  const config = DiscordConfigSchema.parse({ token: DISCORD_BOT.token, apiRoot: fake.apiRoot, ...options.config });
  const adapter = createDiscordAdapter(config, {
    env: options.env ?? {},
    logger,
    commands: options.commands ?? [],
    readyTimeoutMs: 10_000,
    maxRateLimitWaitMs: 5_000,
    loginBackoff: options.loginBackoff ?? { minMs: 50, maxMs: 200 },
    ...(options.sessionLimits && { sessionLimits: options.sessionLimits }),
    replayClock: options.replayClock,
  });
  const context = {
    ...(await testStartContext("discord")),
    ...(options.inboundLost && { inboundLost: options.inboundLost }),
  };
  const start = () =>
    adapter.start(async (message, interaction) => {
      await options.beforeReceive?.(message);
      received.push({ message, ...(interaction && { interaction }) });
    }, context);
  if (options.start !== false) await start();
  return {
    fake,
    adapter,
    logger,
    received,
    /** the start context: the channel state the adapter keeps its rows in */
    context,
    start,
    /** resolves once `count` messages were received */
    async waitForReceived(count: number, timeoutMs = 10_000) {
      await until(() => received.length >= count, timeoutMs).catch(() => {
        throw new Error(`expected ${count} messages, got ${received.length}`);
      });
      return received;
    },
    async close() {
      await adapter.stop();
      await fake.close();
    },
  };
}

/** A started harness as {@link startDiscordHarness} returns it. */
export type DiscordHarness = Awaited<ReturnType<typeof startDiscordHarness>>;

/** Returns a `harness` function whose harnesses are all closed after each test of the calling file. */
export function useDiscordHarness(): (options?: DiscordHarnessOptions) => Promise<DiscordHarness> {
  return closedAfterEach(startDiscordHarness);
}

const FAILURES: Record<ContractFailure, FakeDiscordFailure> = {
  // Longer than the harness's 5 s: handed to the delivery gate instead of waited out.
  rate_limited: { status: 429, code: 0, message: "You are being rate limited.", retryAfterSeconds: 30 },
  chat_not_found: { status: 404, code: 10003, message: "Unknown Channel" },
  network: "disconnect",
};

/** The Discord adapter as the shared contract sees it. */
export async function discordContractPlatform(): Promise<ContractPlatform> {
  const harness = await startDiscordHarness();
  return {
    adapter: harness.adapter,
    target: { channel: "discord", to: WORLD.general },
    sent: () => harness.fake.sent.map((s) => ({ to: s.channelId, text: s.content })),
    failNextSend: (failure) => harness.fake.failNext(FAILURES[failure]),
    close: harness.close,
  };
}

/** The Discord adapter, not started, on the fake Discord: the contract's live loop. */
export async function discordContractLive(): Promise<ContractLive> {
  const harness = await startDiscordHarness({ start: false });
  const bot = { ...DISCORD_BOT.user, discriminator: "0", avatar: null, bot: true };
  return {
    adapter: harness.adapter,
    userWrites: async (text) => harness.fake.dispatch("MESSAGE_CREATE", harness.fake.dm(text)),
    // Discord echoes the bot's own DM back as a MESSAGE_CREATE in the same channel.
    botWrites: async (text) => harness.fake.dispatch("MESSAGE_CREATE", { ...harness.fake.dm(text), author: bot }),
    sent: () => harness.fake.sent.map((s) => ({ to: s.channelId, text: s.content })),
    openConnections: () => harness.fake.openConnections(),
    close: () => harness.fake.close(),
  };
}
