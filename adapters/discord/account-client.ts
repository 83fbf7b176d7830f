import {
  type ChatInputCommandInteraction,
  Client,
  Events,
  GatewayIntentBits,
  Partials,
  type RateLimitData,
} from "discord.js";
import type { AdapterStartContext, ChannelRows, CommandInteraction, InboundSink, Logger } from "../../src/index.js";
import { createCommandInteraction } from "./command-interaction.js";
import { commandToInbound } from "./command-to-inbound.js";
import type { DiscordAccount } from "./discord-accounts.js";
import { describeDiscordError } from "./discord-errors.js";
import { type HeldQueue, followSession, heldQueue, sessionKeeper, stopKeepingSession } from "./gateway-session.js";
import { type DiscordPlace, MalformedMessageError } from "./message-shape.js";
import { type NativeCommand, INPUT_OPTION, registerSlashCommands } from "./slash-commands.js";
import type { MessageLimits } from "./split-text.js";
import { toInbound } from "./to-inbound.js";
import { logIn } from "./log-in.js";
import { type LoginBackoff, loginOrRetry } from "./login-retry.js";
import { placeOf } from "./place-of.js";
import { type ReplayClock, replayStoredSession } from "./replay-session.js";
import { type SessionLimits, storeInOrder } from "./store-in-order.js";

/** Guilds, guild messages, DMs, and the privileged Message Content intent (without it `content` is empty). */
const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
];

/** What one account's client needs from the adapter. */
export interface AccountClientDeps {
  logger: Logger;
  sink: InboundSink;
  commands: readonly NativeCommand[];
  limits: MessageLimits;
  /** how long `start` waits for the gateway's READY */
  readyTimeoutMs: number;
  /** rate limits longer than this are handed to the delivery gate (which retries after the wait) */
  maxRateLimitWaitMs: number;
  /** the account's channel state: its gateway session, so the next holder can resume it (./gateway-session.ts) */
  state: ChannelRows;
  /** the tries of a message the core could not store, and how long it then holds the stored session */
  sessionLimits: SessionLimits;
  /** the clock the replay of a stored session is bounded by (the real one when not given) */
  replayClock?: ReplayClock;
  /** the backoff between logins while Discord is away at start (./login-retry.ts; 2 s to 30 s when not given) */
  loginBackoff?: LoginBackoff | undefined;
  /** counts messages never stored, given up for good (the gateway's metrics; AdapterStartContext.inboundLost) */
  inboundLost?: AdapterStartContext["inboundLost"];
}

/** One running bot. */
export interface AccountClient {
  account: DiscordAccount;
  client: Client<true>;
  stop(): Promise<void>;
  /** send-only (./send-only-client.ts): resolves once Discord said who the bot is, asking again each time until then */
  ready?(): Promise<void>;
  /** send-only: whether Discord answered yet (AccountHealth without `sendOnly`) */
  health?(): { connected: boolean; lastError?: string };
}

/** A discord.js client for one account: sends go back to the delivery gate on errors and long rate limits. */
export function createClient(
  account: DiscordAccount,
  deps: Pick<AccountClientDeps, "logger" | "maxRateLimitWaitMs">,
): Client {
  const { accountId } = account;
  // discord.js asks this before every rate-limit wait (a 429 it received, or a bucket it knows is empty).
  const rejectOnRateLimit = (data: RateLimitData) => {
    const handOver = data.retryAfter > deps.maxRateLimitWaitMs;
    deps.logger.warn(
      { accountId, route: data.route, method: data.method, waitMs: data.retryAfter, global: data.global },
      handOver ? "discord rate limit: retrying later" : "discord rate limit: waiting before sending",
    );
    return handOver;
  };
  return new Client({
    intents: DISCORD_INTENTS,
    // DMs arrive in channels discord.js has not cached.
    partials: [Partials.Channel],
    rest: {
      ...(account.settings.apiRoot && { api: account.settings.apiRoot.replace(/\/+$/, "") }),
      // Network errors and 5xx go back to the delivery gate, which retries with backoff.
      retries: 0,
      rejectOnRateLimit,
    },
  });
}

/**
 * Starts one account: logs in (a rejected token or a refused intent fails the start with what to
 * do; Discord away starts it not connected and logs in in the background, ./login-retry.ts) with its live events held, replays what the previous holder's session left
 * (./replay-session.ts), overwrites the slash commands, then hands the replayed messages, then the
 * held and every later live message and slash command, to the sink in order. Each message handled
 * advances the stored session, so the next holder resumes after it; a message the core could not
 * store is logged and tried again, and one never stored keeps the stored session before it for a
 * bounded time (the next holder's RESUME replays it; ./store-in-order.ts).
 */
export async function startAccountClient(account: DiscordAccount, deps: AccountClientDeps): Promise<AccountClient> {
  const { accountId, settings } = account;
  const { logger } = deps;
  const countLost = deps.inboundLost && ((count: number) => deps.inboundLost?.(accountId, count));
  const keeper = sessionKeeper(deps.state, { logger, accountId, countLost }, { freeze: deps.sessionLimits.freeze });
  const stored = keeper.stored();
  const client = createClient(account, deps);
  // Held until the replay is done: the replayed messages come first, and need the bot user and channels.
  const queue = heldQueue((err) => logger.error({ accountId, err }, "discord event failed"));
  const hand: Hand = async (...args) => {
    await deps.sink(...args).catch((err: unknown) => {
      // This connection will not get it again: it is tried again, then only the next start's RESUME can.
      logger.warn(
        { accountId, messageId: args[0].messageId, err },
        "discord message not stored; tried again in order, then left to the next start's resume of this session",
      );
      throw err;
    });
  };
  const stopping = new AbortController();
  // Live and replayed messages alike: tried again while not stored, then the row kept before them.
  const store = storeInOrder(keeper, (data) => handleMessage(client, data, account, logger, hand), {
    retriesMs: deps.sessionLimits.retriesMs,
    stopping: stopping.signal,
  });
  followSession(client, keeper, queue.push, store);
  followCommands(client, { accountId, logger, limits: deps.limits }, queue.push, hand);
  client.on(Events.ShardReconnecting, () => {
    if (!stopping.signal.aborted) logger.info({ accountId }, "discord gateway reconnecting");
  });
  client.on(Events.Error, (err) => logger.warn({ accountId, err: describeDiscordError(err) }, "discord client error"));

  const connect = async () => {
    // IDENTIFY first, then RESUME the stored session: a message sent in between is in both, never in neither.
    // A failed start hands nothing: the stored session still points before the replayed messages.
    const ready = await logIn(client, account, deps.readyTimeoutMs);
    const replayed =
      stored && (await replayStoredSession(stored, account.token, { logger, accountId }, deps.replayClock));
    // A replayed message not stored keeps the row on the stored session, so the next holder replays it again.
    queue.release((replayed?.messages ?? []).map((data) => () => store(data)));
    logger.info({ accountId, botId: ready.user.id, username: ready.user.username }, "discord bot connected");
    await registerSlashCommands(ready, deps.commands, {
      accountId,
      enabled: settings.nativeCommands !== false,
      guildIds: settings.commandGuilds,
      logger,
    });
  };
  // Discord away at start (5xx, no connection): started not connected, logging in in the background.
  const login = await loginOrRetry(connect, { accountId, logger, backoff: deps.loginBackoff });
  return {
    account,
    client: client as Client<true>,
    ready: login.ready,
    health: login.health,
    async stop() {
      stopping.abort();
      await login.stop();
      await stopKeepingSession(client, { drained: queue.drained, keeper }, { logger, accountId });
    },
  };
}

/** Queues every slash command, acknowledged at once: Discord drops an interaction that is not within 3 s. */
function followCommands(
  client: Client,
  context: { accountId: string; logger: Logger; limits: MessageLimits },
  push: HeldQueue["push"],
  hand: Hand,
): void {
  client.on(Events.InteractionCreate, (interaction) => {
    if (!interaction.isChatInputCommand()) return;
    const answer = createCommandInteraction(interaction, context);
    const acknowledged = answer.acknowledge();
    push(() => handleCommand(client, interaction, context.accountId, acknowledged, answer, hand));
  });
}

/** Hands the core a message, or says loudly that it was not stored: this connection never gets it again. */
type Hand = (...args: Parameters<InboundSink>) => Promise<void>;

/** One MESSAGE_CREATE: mapped and handed to the core; a malformed or ignored one is only logged. False: not stored. */
async function handleMessage(
  client: Client,
  data: unknown,
  account: DiscordAccount,
  logger: Logger,
  hand: Hand,
): Promise<boolean> {
  const { accountId, settings } = account;
  const payload = data as { channel_id?: string; guild_id?: string; id?: string };
  const channel: DiscordPlace | undefined = await placeOf(client, payload.channel_id, payload.guild_id);
  let message: ReturnType<typeof toInbound>;
  try {
    message = toInbound({ message: data as never, ...(channel && { channel }) }, client.user!, {
      accountId,
      allowBots: settings.allowBots,
      groupDms: settings.groupDms,
    });
  } catch (err) {
    if (!(err instanceof MalformedMessageError)) throw err;
    logger.warn({ accountId, messageId: payload.id, err: err.message }, "malformed discord message ignored");
    return true;
  }
  if (!message) {
    logger.debug({ accountId, messageId: payload.id }, "discord message ignored");
    return true;
  }
  return hand(message).then(
    () => true,
    () => false,
  );
}

/** One slash command, once acknowledged: handed to the core, or answered that it could not be taken. */
async function handleCommand(
  client: Client,
  interaction: ChatInputCommandInteraction,
  accountId: string,
  acknowledged: Promise<void>,
  answer: CommandInteraction,
  hand: Hand,
): Promise<void> {
  await acknowledged;
  const message = commandToInbound(await commandEvent(client, interaction), accountId);
  await hand(message, answer).catch(() =>
    answer.reply("Switchboard could not take this command right now; please try again.", { ephemeral: true }),
  );
}

/** A slash command as plain data, with what the cache knows about its channel. */
async function commandEvent(client: Client, interaction: ChatInputCommandInteraction) {
  const channel = await placeOf(client, interaction.channelId, interaction.guildId ?? undefined);
  const input = interaction.options.getString(INPUT_OPTION);
  const member = interaction.member;
  const nick = member && "nick" in member ? member.nick : undefined;
  return {
    id: interaction.id,
    name: interaction.commandName,
    ...(input !== null && { input }),
    channelId: interaction.channelId,
    ...(interaction.guildId && { guildId: interaction.guildId }),
    ...(channel && { channel }),
    user: { id: interaction.user.id, username: interaction.user.username, globalName: interaction.user.globalName },
    ...(nick !== undefined && { nick }),
    createdAt: interaction.createdTimestamp,
  };
}
