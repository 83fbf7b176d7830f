import type { WAMessage, WAMessageKey } from "baileys";
import type { ChannelRows, InboundSink, Logger } from "../../src/index.js";
import { type WhatsAppAuth, openAuthState } from "./auth-state.js";
import { type AccountStatus, writeAccountStatus } from "./account-status.js";
import { createInboundHandler } from "./inbound-handler.js";
import { e164Of, selfFrom } from "./jids.js";
import { type ReconnectBackoff, decideReconnect } from "./reconnect-policy.js";
import { statusCodeOf } from "./whatsapp-errors.js";
import type { WhatsAppAccount } from "./whatsapp-accounts.js";
import type { WhatsAppSocket, WhatsAppSocketFactory } from "./whatsapp-socket.js";

/** What one account's connection needs. */
export interface ConnectionDeps {
  /** the account's rows of the channel state: its credentials, keys and status */
  rows: ChannelRows;
  /** the channel state is read-only (nothing imported) */
  readOnly: boolean;
  sink: InboundSink;
  logger: Logger;
  socketFactory: WhatsAppSocketFactory;
  backoff?: ReconnectBackoff;
  random?: () => number;
  /** the reconnect timer; default Node's (tests pass a manual clock's) */
  timers?: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
  /** sees every close and the decision taken (tests, diagnostics) */
  onClose?: (statusCode: number | undefined, decision: ReturnType<typeof decideReconnect>) => void;
}

/** A running account: its socket (when open), its status, and the messages it may quote. */
export interface AccountConnection {
  readonly account: WhatsAppAccount;
  status(): AccountStatus;
  /** the open socket, waiting up to `waitMs` for a reconnect; undefined when it stays closed */
  socket(waitMs: number): Promise<WhatsAppSocket | undefined>;
  /** a recent inbound message by id (for quoting), if still remembered */
  recent(messageId: string): WAMessage | undefined;
  /** remembers a message the bot sent, so its echo is never answered */
  sent(key: WAMessageKey | undefined): void;
  stop(): Promise<void>;
}

/**
 * Runs one linked device: opens its credentials, connects, hands inbound messages to the sink, and
 * reconnects with backoff after a close until WhatsApp says the device was logged out (then it
 * stops and says how to link again). An account that was never linked does not connect at all: the
 * gateway runs on without it. Never throws after start; every failure lands in `status()`.
 */
export async function connectAccount(account: WhatsAppAccount, deps: ConnectionDeps): Promise<AccountConnection> {
  const { logger } = deps;
  const log = { channel: "whatsapp", accountId: account.accountId };
  let auth: WhatsAppAuth | undefined;
  let current: WhatsAppSocket | undefined;
  let open = false;
  let stopped = false;
  let failures = 0;
  let timer: unknown;
  const timers = deps.timers ?? {
    setTimeout,
    clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
  };
  let lastError: string | undefined;
  let savedAt: number | undefined;
  let connectedAt: number | undefined;
  const waiters = new Set<() => void>();
  const inbound = createInboundHandler(account, {
    ...deps,
    self: () => selfFrom(auth?.state.creds.me ?? current?.user),
    connectedAt: () => connectedAt,
  });

  const status = (): AccountStatus => {
    const number = e164Of(auth?.state.creds.me?.id);
    return {
      accountId: account.accountId,
      linked: auth?.linked() ?? false,
      connected: open,
      ...(number && { number }),
      ...(lastError && { lastError }),
      ...(savedAt !== undefined && { credentialsSavedAt: savedAt }),
      updatedAt: Date.now(),
    };
  };
  // One write at a time, each taking the status when it runs: the file always ends at the latest state.
  let recording: Promise<void> = Promise.resolve();
  const record = () => {
    recording = recording.then(() =>
      writeAccountStatus(deps.rows, status()).catch((err: unknown) => {
        // The status row is for `channels status` only: the connection goes on without it.
        logger.warn({ ...log, err }, "whatsapp status not recorded");
      }),
    );
    return recording;
  };
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };

  function connect(): void {
    timer = undefined;
    if (stopped || !auth) return;
    let socket: ReturnType<typeof deps.socketFactory>;
    try {
      socket = deps.socketFactory({ accountId: account.accountId, auth: auth.state, logger });
    } catch (err) {
      // A socket that cannot even be built is a failed connection: the same backoff, never a crash.
      logger.warn({ ...log, err }, "whatsapp socket could not be created");
      onClose(undefined, err);
      return;
    }
    current = socket;
    socket.ev.on("creds.update", () => {
      void auth
        ?.saveCreds()
        .then(() => {
          savedAt = auth?.savedAt() ?? Date.now();
        })
        .catch((err: unknown) => logger.error({ ...log, err }, "whatsapp credentials not saved"));
    });
    socket.ev.on("messages.upsert", (event) => {
      if (socket === current) void inbound.upsert(socket, event);
    });
    socket.ev.on("connection.update", (update) => {
      if (socket !== current) return;
      if (update.connection === "open") {
        open = true;
        connectedAt = Date.now();
        failures = 0;
        lastError = undefined;
        logger.info({ ...log, number: e164Of(auth?.state.creds.me?.id) }, "whatsapp connected");
        void record();
        wake();
      } else if (update.connection === "close") {
        onClose(statusCodeOf(update.lastDisconnect?.error), update.lastDisconnect?.error);
      }
    });
  }

  function onClose(code: number | undefined, error: unknown): void {
    open = false;
    current = undefined;
    if (stopped) return;
    const decision = decideReconnect(code, failures, account.accountId, deps.backoff, deps.random);
    deps.onClose?.(code, decision);
    if (decision.action === "stop") {
      lastError = decision.message;
      logger.error({ ...log, statusCode: code }, decision.message);
      void record();
      wake();
      return;
    }
    failures += 1;
    lastError = `connection closed (${code ?? "no status"}: ${(error as Error | undefined)?.message ?? "unknown"}); reconnecting`;
    logger.warn(
      { ...log, statusCode: code, retryInMs: decision.delayMs, attempt: failures },
      "whatsapp connection closed; reconnecting",
    );
    void record();
    timer = timers.setTimeout(connect, decision.delayMs);
  }

  try {
    auth = await openAuthState(deps.rows, { logger, legacyDir: account.authDir, readOnly: deps.readOnly });
    savedAt = auth.savedAt();
  } catch (err) {
    lastError = (err as Error).message;
    logger.error({ ...log, err }, "whatsapp credentials unreadable; this account stays offline");
  }
  if (auth && !auth.linked()) {
    lastError = `not linked: run "switchboard channels login whatsapp${account.accountId === "default" ? "" : ` --account ${account.accountId}`}" and scan the QR code`;
    logger.warn(log, lastError);
  } else if (auth) connect();
  await record();

  return {
    account,
    status,
    async socket(waitMs) {
      if (open && current) return current;
      if (stopped || (!current && !timer)) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(wait);
          waiters.delete(done);
          resolve();
        };
        const wait = setTimeout(done, waitMs);
        waiters.add(done);
      });
      return open && current ? current : undefined;
    },
    recent: inbound.recent,
    sent: inbound.rememberSent,
    async stop() {
      stopped = true;
      timers.clearTimeout(timer);
      timer = undefined;
      const socket = current;
      current = undefined;
      open = false;
      wake();
      socket?.end(undefined);
      await inbound.idle();
      await recording;
    },
  };
}
