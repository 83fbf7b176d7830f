import {
  type AccountHealth,
  type ChannelAdapter,
  type DeliveryContext,
  type Logger,
  channelAccountIds,
  normalizeAccountId,
  resolveAccountSettings,
  runningAccount,
  stopRunningAccounts,
} from "../../src/index.js";
import type { AccountConnection, ConnectionDeps } from "./account-connection.js";
import type { AccountStatus } from "./account-status.js";
import type { ReconnectBackoff } from "./reconnect-policy.js";
import { sendText } from "./send-text.js";
import { type WhatsAppConfig, resolveWhatsAppAccounts } from "./whatsapp-accounts.js";
import type { WhatsAppSocketFactory } from "./whatsapp-socket.js";
import { jidOfTarget, whatsappTargets } from "./whatsapp-target.js";

/** Dependencies of {@link createWhatsAppAdapter}; the adapter reads no globals. */
export interface WhatsAppAdapterDeps {
  /** `$SWITCHBOARD_HOME`: credentials default to `channels/whatsapp/<account>` */
  home: string;
  logger: Logger;
  /** default: the real baileys socket; tests pass sockets built on baileys' event emitter */
  socketFactory?: WhatsAppSocketFactory;
  /** default: 2 s to 30 s, factor 1.8, jitter 0.25 */
  backoff?: ReconnectBackoff;
  /** the reconnect timer; default Node's (tests pass a manual clock's) */
  timers?: ConnectionDeps["timers"];
  /** default: 15000; how long a send waits for a closed connection before the outbox retries it */
  sendWaitMs?: number;
}

/** The WhatsApp {@link ChannelAdapter} with its optional typing indicator and per-account status. */
export interface WhatsAppAdapter extends ChannelAdapter {
  /** `composing` in the target chat; best effort, never throws */
  typing(target: DeliveryContext): Promise<void>;
  /** every running account: linked, connected, last error, when its credentials were saved */
  accounts(): AccountStatus[];
  accountHealth(accountId: string): AccountHealth | undefined;
}

function textLimitOf(config: WhatsAppConfig): number {
  return Math.min(
    ...channelAccountIds(config).map((id) => resolveAccountSettings("whatsapp", config, id).textChunkLimit),
  );
}

/**
 * Creates the WhatsApp adapter: one linked device per configured account (credentials read at
 * `start`), each reconnecting on its own, and sends routed by the target's `accountId`. It maps
 * and sends; access, mention gating, commands and keys are the core's.
 */
export function createWhatsAppAdapter(config: WhatsAppConfig, deps: WhatsAppAdapterDeps): WhatsAppAdapter {
  const connections = new Map<string, AccountConnection>();
  const knownNumbers = new Set<string>();
  const { logger } = deps;

  const connectionFor = (target: DeliveryContext): AccountConnection =>
    runningAccount(connections, target, { name: "WhatsApp", channel: "whatsapp" });

  return {
    id: "whatsapp",
    capabilities: {
      maxTextLength: textLimitOf(config),
      markup: true,
      typing: true,
      edit: false,
      reactions: true,
      readReceipts: true,
      nativeCommands: false,
      threads: false,
      deduplicatesSends: false,
      gatewayClients: false,
    },
    targets: whatsappTargets,

    async start(sink) {
      await stopRunningAccounts(connections); // a second start replaces the connections instead of running them twice
      const accounts = resolveWhatsAppAccounts(config, deps.home);
      // baileys is loaded here, not when the module is: CLI commands that start no gateway never pay for it.
      const { connectAccount } = await import("./account-connection.js");
      const socketFactory = deps.socketFactory ?? (await import("./whatsapp-socket.js")).baileysSocketFactory();
      for (const account of accounts) {
        const connection = await connectAccount(account, {
          home: deps.home,
          sink,
          logger,
          socketFactory,
          ...(deps.backoff && { backoff: deps.backoff }),
          ...(deps.timers && { timers: deps.timers }),
        });
        connections.set(account.accountId, connection);
      }
      logger.info(
        {
          accounts: [...connections.values()].map((c) => ({
            accountId: c.account.accountId,
            linked: c.status().linked,
          })),
        },
        "whatsapp adapter started",
      );
    },

    stop: () => stopRunningAccounts(connections),

    async send(target, message) {
      const connection = connectionFor(target);
      const messageIds = await sendText(connection, target.to, message, {
        replyToMode: connection.account.settings.replyToMode,
        waitMs: deps.sendWaitMs ?? 15_000,
        knownNumbers,
      });
      return { messageIds };
    },

    async typing(target) {
      try {
        const socket = await connectionFor(target).socket(0);
        await socket?.sendPresenceUpdate("composing", jidOfTarget(target));
      } catch (err) {
        // Typing is a courtesy: a failure is logged and the run goes on.
        logger.debug({ channel: "whatsapp", to: target.to, err }, "whatsapp typing failed");
      }
    },

    accounts: () => [...connections.values()].map((c) => c.status()),

    accountHealth(accountId) {
      const status = connections.get(normalizeAccountId(accountId))?.status();
      if (!status) return undefined;
      return {
        connected: status.connected,
        ...(status.credentialsSavedAt !== undefined && { credentialsSavedAt: status.credentialsSavedAt }),
        ...(status.lastError && { lastError: status.lastError }),
      };
    },
  };
}
