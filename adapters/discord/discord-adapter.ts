import { Routes } from "discord.js";
import {
  type ChannelAdapter,
  type DeliveryContext,
  type Logger,
  channelAccountIds,
  resolveAccountSettings,
  runningAccount,
  stopRunningAccounts,
} from "../../src/index.js";
import { type AccountClient, startAccountClient } from "./account-client.js";
import { type DiscordConfig, resolveDiscordAccounts } from "./discord-accounts.js";
import { describeDiscordError } from "./discord-errors.js";
import { discordTargets, parseDiscordTarget } from "./discord-target.js";
import { sendText } from "./send-text.js";
import type { NativeCommand } from "./slash-commands.js";
import type { MessageLimits } from "./split-text.js";

/** Dependencies of {@link createDiscordAdapter}; the adapter reads no globals. */
export interface DiscordAdapterDeps {
  /** the process environment, passed in (DISCORD_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** the slash commands registered at start; default none (the list is then cleared) */
  commands?: readonly NativeCommand[];
  /** default 30 s: how long `start` waits for the gateway */
  readyTimeoutMs?: number;
  /** default 10 s: longer rate-limit waits are handed to the delivery gate instead of waited out in the send */
  maxRateLimitWaitMs?: number;
  /** default 8 s: a typing indicator lasts 10 s on Discord, so it is renewed no more often than this */
  typingRenewMs?: number;
}

/** The Discord {@link ChannelAdapter} with its typing indicator. */
export interface DiscordAdapter extends ChannelAdapter {
  /** Typing indicator in the target channel, renewed at most every `typingRenewMs`; best effort, never throws. */
  typing(target: DeliveryContext): Promise<void>;
}

/** The tightest limits of all accounts: `textChunkLimit` (default 2000) and `maxLinesPerMessage` (default 17). */
function limitsOf(config: DiscordConfig): MessageLimits {
  const all = channelAccountIds(config).map((id) => resolveAccountSettings("discord", config, id));
  return {
    maxLength: Math.min(...all.map((a) => a.textChunkLimit)),
    maxLines: Math.min(...all.map((a) => a.maxLinesPerMessage)),
  };
}

/**
 * Creates the Discord adapter: one discord.js client per configured account (tokens are read at
 * `start`), messages and slash commands to the core, sends routed by the target's `accountId`. It
 * maps and sends; access, mention gating, commands and keys are the core's.
 */
export function createDiscordAdapter(config: DiscordConfig, deps: DiscordAdapterDeps): DiscordAdapter {
  const clients = new Map<string, AccountClient>();
  const { logger } = deps;
  const limits = limitsOf(config);
  const typingRenewMs = deps.typingRenewMs ?? 8_000;
  const lastTyping = new Map<string, number>();

  const clientFor = (target: DeliveryContext): AccountClient =>
    runningAccount(clients, target, { name: "Discord", channel: "discord" });

  return {
    id: "discord",
    capabilities: {
      maxTextLength: limits.maxLength,
      maxLinesPerMessage: limits.maxLines,
      // Discord renders markdown itself: text is passed through as written.
      markup: true,
      typing: true,
      edit: true,
      reactions: true,
      readReceipts: false,
      nativeCommands: true,
      // A thread is a channel of its own (`channel:<threadId>`), never a thread id inside a target.
      threads: false,
      // Sends carry a nonce Discord enforces for a few minutes only, so a resend after a longer outage may repeat.
      deduplicatesSends: false,
      gatewayClients: false,
    },
    targets: discordTargets,

    async start(sink) {
      await stopRunningAccounts(clients); // a second start replaces the clients instead of running them twice
      const accounts = resolveDiscordAccounts(config, deps.env);
      try {
        for (const account of accounts) {
          const client = await startAccountClient(account, {
            logger,
            sink,
            commands: deps.commands ?? [],
            limits,
            readyTimeoutMs: deps.readyTimeoutMs ?? 30_000,
            maxRateLimitWaitMs: deps.maxRateLimitWaitMs ?? 10_000,
          });
          clients.set(account.accountId, client);
        }
      } catch (err) {
        await stopRunningAccounts(clients);
        throw err;
      }
      logger.info({ accounts: accounts.map((a) => a.accountId) }, "discord adapter started");
    },

    stop: () => stopRunningAccounts(clients),

    async send(target, message) {
      const running = clientFor(target);
      const messageIds = await sendText(running.client, parseDiscordTarget(target), message, {
        replyToMode: running.account.settings.replyToMode,
        limits,
      });
      return { messageIds };
    },

    async typing(target) {
      try {
        const running = clientFor(target);
        const parsed = parseDiscordTarget(target);
        const key = `${running.account.accountId}:${parsed.kind}:${parsed.id}`;
        const now = Date.now();
        if (now - (lastTyping.get(key) ?? Number.NEGATIVE_INFINITY) < typingRenewMs) return;
        lastTyping.set(key, now);
        const channelId = parsed.kind === "channel" ? parsed.id : (await running.client.users.createDM(parsed.id)).id;
        await running.client.rest.post(Routes.channelTyping(channelId));
      } catch (err) {
        // Typing is a courtesy: a failure is logged and the run goes on.
        logger.debug({ to: target.to, err: describeDiscordError(err) }, "discord typing failed");
      }
    },
  };
}
