import { Routes } from "discord.js";
import {
  type AccountAdapter,
  type ChannelAdapter,
  type DeliveryContext,
  type Logger,
  createAccountAdapter,
} from "../../src/index.js";
import type { MessageLimits } from "./split-text.js";
import { type AccountClient, startAccountClient } from "./account-client.js";
import type { ReplayClock } from "./replay-session.js";
import { resolveDiscordAccounts } from "./discord-accounts.js";
import { type DiscordConfig, discordConfig } from "./discord-config.js";
import { describeDiscordError, toDeliveryError } from "./discord-errors.js";
import { discordTargets, parseDiscordTarget } from "./discord-target.js";
import type { LoginBackoff } from "./login-retry.js";
import { startSendOnlyClient } from "./send-only-client.js";
import { sendText } from "./send-text.js";
import type { NativeCommand } from "./slash-commands.js";
import { SESSION_LIMITS, type SessionLimits } from "./store-in-order.js";

/** Dependencies of {@link createDiscordAdapter}; the adapter reads no globals. */
export interface DiscordAdapterDeps {
  /** the process environment, passed in (DISCORD_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** the slash commands registered at start; none when not given (the list is then cleared) */
  commands?: readonly NativeCommand[];
  /** how long `start` waits for the gateway (30 s when not given) */
  readyTimeoutMs?: number;
  /** the backoff between logins while Discord is away at start (tests shorten it); default 2 s to 30 s */
  loginBackoff?: LoginBackoff;
  /** longer rate-limit waits (10 s when not given) are handed to the delivery gate instead of waited out in the send */
  maxRateLimitWaitMs?: number;
  /** a typing indicator lasts 10 s on Discord, so it is renewed no more often than this (8 s when not given) */
  typingRenewMs?: number;
  /** the tries of a message the core could not store, and the stored session's freeze after them (./store-in-order.ts) */
  sessionLimits?: SessionLimits;
  /** the clock bounding the replay of a stored gateway session (the real one when not given) */
  replayClock?: ReplayClock;
}

/** The Discord {@link ChannelAdapter} with its typing indicator. */
export interface DiscordAdapter extends ChannelAdapter {
  /** Typing indicator in the target channel, renewed at most every `typingRenewMs`; best effort, never throws. */
  typing(target: DeliveryContext): Promise<void>;
}

/**
 * Creates the Discord adapter: one discord.js client per configured account (tokens are read at
 * `start`), messages and slash commands to the core, sends routed by the target's `accountId`.
 * Started send-only (`context.receive` false) each client only sends, over REST
 * (./send-only-client.ts). It maps and sends; access, mention gating, commands and keys are the core's.
 */
export function createDiscordAdapter(config: DiscordConfig, deps: DiscordAdapterDeps): DiscordAdapter {
  const { logger } = deps;
  const { adapter, accountFor }: AccountAdapter<AccountClient> = createAccountAdapter({
    channel: discordConfig,
    section: config,
    name: "Discord",
    // Discord renders markdown itself; a thread is a channel of its own (`channel:<threadId>`). Sends
    // carry a nonce Discord enforces for a few minutes only, so a resend after a longer outage may repeat.
    capabilities: { typing: true, nativeCommands: true, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit, maxLinesPerMessage: settings.maxLinesPerMessage }),
    targets: discordTargets,
    logger,
    accounts: () => resolveDiscordAccounts(config, deps.env),
    startAccount: (account, sink, context): Promise<AccountClient> =>
      context.receive === false
        ? startSendOnlyClient(account, { logger, maxRateLimitWaitMs: deps.maxRateLimitWaitMs ?? 10_000 })
        : startAccountClient(account, {
            logger,
            sink,
            state: context.state.rows(account.accountId),
            commands: deps.commands ?? [],
            limits,
            readyTimeoutMs: deps.readyTimeoutMs ?? 30_000,
            loginBackoff: deps.loginBackoff,
            maxRateLimitWaitMs: deps.maxRateLimitWaitMs ?? 10_000,
            sessionLimits: deps.sessionLimits ?? SESSION_LIMITS,
            replayClock: deps.replayClock,
            inboundLost: context.inboundLost,
          }),
    describe: (client: AccountClient) => client.account.accountId,
    async send(client, target, message) {
      // An account started while Discord was away: a retryable failure until it logged in (or, send-only, learnt the bot's id).
      await client.ready?.().catch((err: unknown) => {
        throw toDeliveryError(err, { target: target.to ?? "the target" });
      });
      const replyToMode = client.account.settings.replyToMode;
      return {
        messageIds: await sendText(client.client, parseDiscordTarget(target), message, { replyToMode, limits }),
      };
    },
  });
  const limits: MessageLimits = {
    maxLength: adapter.capabilities.maxTextLength,
    maxLines: adapter.capabilities.maxLinesPerMessage ?? 17,
  };
  return { ...adapter, typing: createTyping(accountFor, logger, deps.typingRenewMs ?? 8_000) };
}

/** Discord's typing indicator, renewed at most every `renewMs` per channel; best effort, never throws. */
function createTyping(
  accountFor: (target: DeliveryContext) => AccountClient,
  logger: Logger,
  renewMs: number,
): DiscordAdapter["typing"] {
  const lastTyping = new Map<string, number>();
  return async (target) => {
    try {
      const running = accountFor(target);
      const parsed = parseDiscordTarget(target);
      const key = `${running.account.accountId}:${parsed.kind}:${parsed.id}`;
      const now = Date.now();
      if (now - (lastTyping.get(key) ?? Number.NEGATIVE_INFINITY) < renewMs) return;
      lastTyping.set(key, now);
      await running.ready?.();
      const channelId = parsed.kind === "channel" ? parsed.id : (await running.client.users.createDM(parsed.id)).id;
      await running.client.rest.post(Routes.channelTyping(channelId));
    } catch (err) {
      // Typing is a courtesy: a failure is logged and the run goes on.
      logger.debug({ to: target.to, err: describeDiscordError(err) }, "discord typing failed");
    }
  };
}
