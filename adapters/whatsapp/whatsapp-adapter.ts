import {
  type AccountHealth,
  type AdapterStartContext,
  type ChannelAdapter,
  type DeliveryContext,
  ErrorCodes,
  type InboundSink,
  type Logger,
  type OutboundMessage,
  SwitchboardError,
  createAccountAdapter,
  normalizeAccountId,
} from "../../src/index.js";
import type { AccountConnection, ConnectionDeps } from "./account-connection.js";
import { type HolderAccount, holderAccount } from "./holder-account.js";
import { serveHolderCalls } from "./holder-handlers.js";
import type { AccountStatus } from "./account-status.js";
import type { ReconnectBackoff } from "./reconnect-policy.js";
import { sendText } from "./send-text.js";
import { type WhatsAppAccount, resolveWhatsAppAccounts } from "./whatsapp-accounts.js";
import { type WhatsAppConfig, type WhatsAppSettings, whatsappConfig } from "./whatsapp-config.js";
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
 * needs the device's socket: a send-only start (`context.receive` false, a partition core of
 * `cluster.owners: "many"`) sends through the gateway holding it (`context.callHolder`, ./holder-account.ts),
 * and that holder answers those calls while it receives (./holder-handlers.ts); a send-only start
 * without the peer call is refused. It maps and sends; access, mention gating, commands and keys are the core's.
 */
export function createWhatsAppAdapter(config: WhatsAppConfig, deps: WhatsAppAdapterDeps): WhatsAppAdapter {
  const { logger } = deps;
  const knownNumbers = new Set<string>();
  const sendOn: SendOn = (connection, to, message, waitMs) =>
    sendText(connection, to, message, { replyToMode: connection.account.settings.replyToMode, waitMs, knownNumbers });
  const { adapter, accountFor, running } = accountAdapter(config, deps, sendOn);
  const local = (accountId: string) => {
    const c = running.get(accountId);
    return c && !isSendOnly(c) ? c : undefined;
  };
  let stopServing = (): void => undefined;
  return {
    ...adapter,
    async start(sink, context) {
      if (context.receive === false && !context.callHolder) throw sendOnlyRefused();
      stopServing();
      await adapter.start(sink, context);
      // The global holder answers the partition cores' sends while it holds the sockets.
      if (context.receive !== false && context.servePeers)
        stopServing = serveHolderCalls(context.servePeers, {
          connectionOf: local,
          send: (c, to, message) => sendOn(c, to, message, 0),
        });
    },
    async stop() {
      stopServing();
      await adapter.stop();
    },
    typing: (target) => typingOn(() => accountFor(target), target, logger),
    accounts: () => [...running.keys()].flatMap((id) => local(id)?.status() ?? []),
    accountHealth: (accountId) =>
      adapter.accountHealth?.(accountId) ?? healthOf(local(normalizeAccountId(accountId))?.status()),
  };
}

/** A running account: the linked device's connection on its holder, or a send-only account sending through it. */
type Running = AccountConnection | HolderAccount;

/** The adapter's send of one piece on a connection it holds, waiting up to `waitMs` for the socket. */
type SendOn = (
  c: AccountConnection,
  to: string | undefined,
  message: OutboundMessage,
  waitMs: number,
) => Promise<string[]>;

const isSendOnly = (running: Running): running is HolderAccount => "sendOnly" in running;

/** The accounts: each connected on the holder, or sending through it when started send-only. */
function accountAdapter(config: WhatsAppConfig, deps: WhatsAppAdapterDeps, sendOn: SendOn) {
  return createAccountAdapter<WhatsAppSettings, WhatsAppAccount, Running>({
    channel: whatsappConfig,
    section: config,
    name: "WhatsApp",
    capabilities: { typing: true, nativeCommands: false, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit }),
    targets: whatsappTargets,
    logger: deps.logger,
    accounts: () => resolveWhatsAppAccounts(config, deps.home),
    startAccount: async (account, sink, context) =>
      context.receive === false ? holderAccount(account, context.callHolder!) : connect(account, sink, context, deps),
    describe: (c) => ({
      accountId: c.account.accountId,
      ...(isSendOnly(c) ? { sendOnly: true } : { linked: c.status().linked }),
    }),
    send: async (c, target, message) => ({
      messageIds: isSendOnly(c)
        ? await c.send(target.to, message)
        : await sendOn(c, target.to, message, deps.sendWaitMs ?? 15_000),
    }),
  });
}

/** `composing` in the target chat, from this gateway's socket or through the holder; best effort, never throws. */
async function typingOn(accountOf: () => Running, target: DeliveryContext, logger: Logger): Promise<void> {
  try {
    const c = accountOf();
    if (isSendOnly(c)) return await c.typing(target.to);
    const socket = await c.socket(0);
    await socket?.sendPresenceUpdate("composing", jidOfTarget(target));
  } catch (err) {
    // Typing is a courtesy: a failure is logged and the run goes on.
    logger.debug({ channel: "whatsapp", to: target.to, err }, "whatsapp typing failed");
  }
}

/** A send-only start with no holder to send through (no peer call: not `cluster.owners: many`). */
function sendOnlyRefused(): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.CONFIG_INVALID,
    "A WhatsApp account sends only from the gateway that holds it; a send-only start needs the peer call to that gateway (cluster.owners: many). Remove channels.whatsapp or set cluster.owners: one.",
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
