import {
  type AccountHealth,
  type AdapterStartContext,
  type ChannelAdapter,
  type DeliveryContext,
  ErrorCodes,
  type InboundSink,
  type Logger,
  SwitchboardError,
  createAccountAdapter,
  normalizeAccountId,
} from "../../src/index.js";
import type { AccountConnection, ConnectionDeps } from "./account-connection.js";
import type { AccountStatus } from "./account-status.js";
import type { ReconnectBackoff } from "./reconnect-policy.js";
import { sendText } from "./send-text.js";
import { type WhatsAppAccount, resolveWhatsAppAccounts } from "./whatsapp-accounts.js";
import { type WhatsAppConfig, whatsappConfig } from "./whatsapp-config.js";
import type { WhatsAppSocketFactory } from "./whatsapp-socket.js";
import { jidOfTarget, whatsappTargets } from "./whatsapp-target.js";

/** Dependencies of {@link createWhatsAppAdapter}; the adapter reads no globals. */
export interface WhatsAppAdapterDeps {
  /** `$SWITCHBOARD_HOME`: an earlier version's credentials folder (`channels/whatsapp/<account>` or `authDir`) is imported from it */
  home: string;
  logger: Logger;
  /** the real baileys socket when not given; tests pass sockets built on baileys' event emitter */
  socketFactory?: WhatsAppSocketFactory;
  /** 2 s to 30 s, factor 1.8, jitter 0.25 when not given */
  backoff?: ReconnectBackoff;
  /** the reconnect timer; Node's when not given (tests pass a manual clock's) */
  timers?: ConnectionDeps["timers"];
  /** how long a send waits for a closed connection before the outbox retries it (15 s when not given) */
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

/**
 * Creates the WhatsApp adapter: one linked device per configured account (credentials read at
 * `start`), each reconnecting on its own, and sends routed by the target's `accountId`. A send
 * needs the device's socket, so a send-only start (`context.receive` false) is refused. It maps
 * and sends; access, mention gating, commands and keys are the core's.
 */
export function createWhatsAppAdapter(config: WhatsAppConfig, deps: WhatsAppAdapterDeps): WhatsAppAdapter {
  const knownNumbers = new Set<string>();
  const { logger } = deps;
  const { adapter, accountFor, running } = createAccountAdapter({
    channel: whatsappConfig,
    section: config,
    name: "WhatsApp",
    capabilities: { typing: true, nativeCommands: false, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit }),
    targets: whatsappTargets,
    logger,
    accounts: () => resolveWhatsAppAccounts(config, deps.home),
    startAccount: (account, sink, context) => connect(account, sink, context, deps),
    describe: (c: AccountConnection) => ({ accountId: c.account.accountId, linked: c.status().linked }),
    send: async (connection, target, message) => ({
      messageIds: await sendText(connection, target.to, message, {
        replyToMode: connection.account.settings.replyToMode,
        waitMs: deps.sendWaitMs ?? 15_000,
        knownNumbers,
      }),
    }),
  });

  return {
    ...adapter,
    async start(sink, context) {
      if (context.receive === false) throw sendOnlyRefused();
      await adapter.start(sink, context);
    },
    async typing(target) {
      try {
        const socket = await accountFor(target).socket(0);
        await socket?.sendPresenceUpdate("composing", jidOfTarget(target));
      } catch (err) {
        // Typing is a courtesy: a failure is logged and the run goes on.
        logger.debug({ channel: "whatsapp", to: target.to, err }, "whatsapp typing failed");
      }
    },
    accounts: () => [...running.values()].map((c) => c.status()),
    accountHealth: (accountId) => healthOf(running.get(normalizeAccountId(accountId))?.status()),
  };
}

/** A WhatsApp account sends over its linked device's socket, which only its holder may open. */
function sendOnlyRefused(): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.CONFIG_INVALID,
    "A WhatsApp account sends only from the gateway that holds it; cluster.owners: many does not support WhatsApp accounts yet. Remove channels.whatsapp or set cluster.owners: one.",
  );
}

/** One account's status as `/status` shows it; undefined for an account that is not running. */
function healthOf(status: AccountStatus | undefined): AccountHealth | undefined {
  if (!status) return undefined;
  return {
    connected: status.connected,
    ...(status.credentialsSavedAt !== undefined && { credentialsSavedAt: status.credentialsSavedAt }),
    ...(status.lastError && { lastError: status.lastError }),
  };
}

/** Connects one account; baileys loads here, not with the module, so CLI commands that start no gateway never pay for it. */
async function connect(
  account: WhatsAppAccount,
  sink: InboundSink,
  context: AdapterStartContext,
  deps: WhatsAppAdapterDeps,
): Promise<AccountConnection> {
  const { connectAccount } = await import("./account-connection.js");
  const socketFactory = deps.socketFactory ?? (await import("./whatsapp-socket.js")).baileysSocketFactory();
  return connectAccount(account, {
    rows: context.state.rows(account.accountId),
    readOnly: context.state.readOnly,
    sink,
    logger: deps.logger,
    socketFactory,
    ...(deps.backoff && { backoff: deps.backoff }),
    ...(deps.timers && { timers: deps.timers }),
  });
}
