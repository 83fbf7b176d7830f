import {
  type AnyMessageContent,
  type AuthenticationState,
  type BaileysEventEmitter,
  type Contact,
  type GroupMetadata,
  type MiscMessageGenerationOptions,
  type WAMessage,
  type WAMessageKey,
  type WAPresence,
  makeWASocket,
} from "baileys";
import type { Logger } from "../../src/index.js";

/**
 * The part of a baileys socket the adapter uses. The real one comes from `makeWASocket`; tests
 * build one on baileys' own event emitter (`makeEventBuffer`) and record the sends.
 */
export interface WhatsAppSocket {
  ev: BaileysEventEmitter;
  /** the linked account (a snapshot: the adapter reads `creds.me` first) */
  user?: Contact | undefined;
  sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined>;
  groupMetadata(jid: string): Promise<GroupMetadata>;
  readMessages(keys: WAMessageKey[]): Promise<void>;
  sendPresenceUpdate(type: WAPresence, jid?: string): Promise<void>;
  /** which of these numbers or JIDs have WhatsApp */
  onWhatsApp(...jids: string[]): Promise<Array<{ jid: string; exists: unknown }> | undefined>;
  signalRepository?: { lidMapping?: { getPNForLID(lid: string): Promise<string | null> } };
  requestPairingCode(phoneNumber: string): Promise<string>;
  logout(message?: string): Promise<void>;
  end(error: Error | undefined): void;
}

/** What a socket is made from: the account's auth state and a logger for baileys' own messages. */
interface SocketOptions {
  accountId: string;
  auth: AuthenticationState;
  logger: Logger;
}

/** Creates one socket; a new one for every connection attempt. */
export type WhatsAppSocketFactory = (options: SocketOptions) => WhatsAppSocket;

/** Options of the real socket that tests and the login command change. */
export interface BaileysSocketOptions {
  /** default: WhatsApp's own; a loopback server in tests */
  waWebSocketUrl?: string;
  /** default: 20000 */
  connectTimeoutMs?: number;
}

type BaileysLogger = NonNullable<Parameters<typeof makeWASocket>[0]["logger"]>;

/** baileys' logger interface over ours: its warnings and errors are kept, its chatter dropped. */
function baileysLogger(logger: Logger, bindings: Record<string, unknown>): BaileysLogger {
  const drop = () => undefined;
  const fields = (obj: unknown) => ({
    ...bindings,
    ...(typeof obj === "object" && obj !== null ? obj : { detail: obj }),
  });
  return {
    level: "warn",
    child: (more: Record<string, unknown>) => baileysLogger(logger, { ...bindings, ...more }),
    trace: drop,
    debug: drop,
    info: drop,
    warn: (obj: unknown, msg?: string) => logger.warn(fields(obj), msg ?? "baileys warning"),
    error: (obj: unknown, msg?: string) => logger.error(fields(obj), msg ?? "baileys error"),
  };
}

/**
 * The real socket: `makeWASocket` with the package's built-in WhatsApp Web version (never
 * `fetchLatestBaileysVersion`, which needs the network at start), no history sync, not shown as
 * online (the owner's phone keeps its notifications).
 */
export function baileysSocketFactory(options: BaileysSocketOptions = {}): WhatsAppSocketFactory {
  return ({ accountId, auth, logger }) =>
    makeWASocket({
      auth,
      logger: baileysLogger(logger, { channel: "whatsapp", accountId }),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      ...(options.waWebSocketUrl && { waWebSocketUrl: options.waWebSocketUrl }),
      ...(options.connectTimeoutMs !== undefined && { connectTimeoutMs: options.connectTimeoutMs }),
    });
}
