import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChannelConfigDefinition, SharedAccountSettings } from "../config/channel-table.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { ChannelState } from "../state/channel-state.js";
import type { OutboundKind } from "./outbox-item.js";

/** What leaves for a channel: one piece of text (already within the adapter's limit). */
export interface OutboundMessage {
  text: string;
  /** the platform message this answers, for quoting */
  replyToMessageId?: string;
  /** which piece of a chunked message this is (0-based), so `replyToMode: "first"` quotes only the first */
  part?: { index: number; count: number };
  /**
   * The same for every attempt at this piece (`<outbox id>#<index>`): an adapter whose platform
   * drops repeats (Discord's nonce, a client-chosen WhatsApp message id) passes it on.
   */
  idempotencyKey?: string;
  /** what the piece belongs to: a turn's reply, an announce or a notice (the web chat tells its clients) */
  kind?: OutboundKind;
}

/**
 * A native command (Discord's slash commands) arrives with a way to answer it. Platforms where a
 * command is only a message (Telegram's menu) pass none: the answer is then an ordinary reply.
 * The core never sees the platform's interaction API, only these two steps.
 */
export interface CommandInteraction {
  /**
   * Acknowledges now and answers later (Discord wants an acknowledgement within 3 s). The adapter
   * may defer on its own as soon as the interaction arrives; then this does nothing.
   */
  defer(options?: { ephemeral?: boolean }): Promise<void>;
  /**
   * The answer. `ephemeral`: only the person who typed the command sees it (refusals, help). A text
   * longer than one platform message is sent as follow-ups by the adapter.
   */
  reply(text: string, options?: { ephemeral?: boolean }): Promise<void>;
}

/**
 * Where an adapter hands inbound messages to the core. It resolves once the message is stored
 * durably (its turn may still be running); only then may the adapter acknowledge it to the platform
 * (advance the polling offset, answer the webhook 200, send the receipt). It rejects when the
 * message could not be stored: the adapter must then leave it unacknowledged so it comes again.
 *
 * A native command is a message whose `command` is set (`{ name, args }`, the text `/name args`);
 * `interaction`, when the platform has one, is where its answer goes.
 */
export type InboundSink = (message: InboundMessage, interaction?: CommandInteraction) => Promise<void>;

/**
 * What a channel can do. The core reads these flags, never the channel's name: the delivery gate
 * chunks to `maxTextLength` and `maxLinesPerMessage`, the runtime shows typing only where `typing`
 * is true, and so on. Every adapter declares every flag.
 */
export interface ChannelCapabilities {
  /** longest text one `send` accepts; the delivery gate chunks to it */
  maxTextLength: number;
  /** most lines one message may have (Discord shows 17 before "read more"); undefined: no limit */
  maxLinesPerMessage?: number;
  /** `typing()` shows an indicator */
  typing: boolean;
  /** the platform has its own command menu / slash commands */
  nativeCommands: boolean;
  /**
   * The platform drops a repeated send with the same {@link OutboundMessage.idempotencyKey}: a
   * piece resent after a crash during its send then arrives exactly once. Otherwise (Telegram)
   * that piece is resent once and may arrive twice: delivery is at least once.
   */
  deduplicatesSends: boolean;
  /**
   * The gateway's own clients (terminal, web UI): they passed the gateway's auth, so every sender
   * is an owner and sendPolicy does not gate what is delivered to them (the delivery gate's one
   * read). Replies, notices and announces reach them like any chat: through the gate and `send`.
   * Only the gateway's built-in client channel sets it.
   */
  gatewayClients: boolean;
}

/**
 * One encoder and one decoder of a channel's delivery targets: the text after `<channel>:` in a
 * target such as `telegram:-1001234:topic:42`, `discord:channel:123`, `whatsapp:+15551234567`.
 * `decode(encode(t))` equals `t` for every target the channel can send to (a contract test pins it).
 */
export interface TargetCodec {
  /** a delivery context of this channel to the text after `<channel>:` */
  encode(target: DeliveryContext): string;
  /**
   * The text after `<channel>:` to a delivery context of this channel; throws
   * {@link DeliveryError} with reason `bad_target` naming the forms it accepts.
   */
  decode(text: string): DeliveryContext;
}

/**
 * A platform connection. Adapters turn platform events into {@link InboundMessage}s and send
 * text; they decide nothing about policy, owners, commands or session keys. A leading mention of
 * this bot is the adapter's business: it strips it from `text` and sets `wasMentioned`, so the
 * core's command parser sees text that starts with the command or not.
 */
export interface ChannelAdapter {
  /** the channel name used in keys and targets, e.g. "telegram" */
  readonly id: string;
  readonly capabilities: ChannelCapabilities;
  readonly targets: TargetCodec;
  /** Connects; `context` carries what the gateway lends the adapter (its durable channel state). */
  start(sink: InboundSink, context: AdapterStartContext): Promise<void>;
  stop(): Promise<void>;
  /** Sends one message; throws {@link DeliveryError} when the platform refuses. */
  send(target: DeliveryContext, message: OutboundMessage): Promise<{ messageIds: string[] }>;
  /** Optional: show or clear a typing indicator while a run is in progress. */
  typing?(target: DeliveryContext): Promise<void>;
  /** Optional: serves a platform webhook on the gateway's port; false when the request is not for it. */
  handleHttp?(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Optional: how one account's connection is doing (linked-device channels), for `/status`. */
  accountHealth?(accountId: string): AccountHealth | undefined;
  /** Optional, on a standby (not started): its platform webhook, each event stored with `handOff` for the owner (docs/scale-out.md). */
  standbyWebhook?(handOff: HandOff): Promise<(req: IncomingMessage, res: ServerResponse) => Promise<boolean>>;
  /**
   * Optional, on the owner: takes in an event a standby's webhook stored, as its own webhook would;
   * settles once stored. When it stores, it hands the message to the sink before its first await,
   * so the store is queued at once: the owner's drain takes a pass's rows in together, in row
   * order, each row deleted in the commit of its store (src/gateway/handoff-pass.ts).
   */
  takeHandedOff?(accountId: string, payload: unknown): Promise<void>;
}

/** Stores one platform event a standby received for the owner (the hand-off inbox); settles once committed. */
export type HandOff = (item: { accountId: string; dedupeKey: string; payload: unknown }) => Promise<void>;

/**
 * What the gateway hands an adapter at start. `state` is the channel's own durable state (offsets,
 * device credentials) on the gateway's backend: an adapter keeps nothing durable in files of its own.
 */
export interface AdapterStartContext {
  state: ChannelState;
  /** takes one account before it connects: on PostgreSQL the lease `account:<channel>:<accountId>`, so one gateway holds it (docs/scale-out.md); absent: nothing to take */
  holdAccount?: (accountId: string) => Promise<void>;
  /**
   * On PostgreSQL: resolves true while this gateway still owns its schema (the send guard, src/cluster/send-guard.ts).
   * A poller asks before each poll, so a paused ex-owner that continues never polls beside the new owner; false
   * means the gateway is stopping. Throws while the database cannot say (poll again later). Absent: always true.
   */
  mayAct?: () => Promise<boolean>;
  /**
   * On a cluster owner: awaited before an event that reached this gateway directly (a webhook) is
   * stored, so the events other gateways handed off before it are stored first (the hand-off
   * inbox's drain, src/gateway/handoff-drain.ts; it never rejects). Absent: nothing to wait for.
   */
  beforeInbound?: () => Promise<void>;
  /**
   * Counts `count` platform messages of `accountId` the adapter received and gave up on, never
   * stored (Discord: its stored session's freeze passed its bound), so operators can alert on
   * `switchboard_inbound_lost_messages_total`. Absent: a gateway without metrics; not counted.
   */
  inboundLost?: (accountId: string, count: number) => void;
  /**
   * false: send-only. The adapter connects nothing that receives (no polling, no webhook set or
   * deleted, no platform gateway connection), registers no commands and takes no account lease:
   * another gateway holds the accounts (docs/scale-out.md, "Channel accounts on several owners").
   * `send` and `typing` work. An adapter that cannot send without receiving (WhatsApp) throws a
   * CONFIG_INVALID error, unless it can send through the holder (`callHolder`). Absent: true.
   */
  receive?: boolean;
  /**
   * `cluster.owners: "many"`, on a partition core: runs a handler the global holder's core registered
   * (the peer call to the writer lease's holder, src/gateway/core-peers.ts). Rejects with a
   * SwitchboardError: the handler's, or UNAVAILABLE when no holder could be reached. Absent: none.
   */
  callHolder?: (name: string, params: unknown) => Promise<unknown>;
  /** `cluster.owners: "many"`, on the global holder: answers a name peers call (`callHolder`); returns its removal. Absent: none. */
  servePeers?: (name: string, handler: (params: unknown) => Promise<unknown>) => () => void;
}

/** One channel account's connection as `/status` shows it. */
export interface AccountHealth {
  connected: boolean;
  /** ms; when the account's credentials were last refreshed (a device link that stops refreshing needs a relink) */
  credentialsSavedAt?: number;
  /** why it is not connected, or what the owner must do */
  lastError?: string;
  /** started send-only (`AdapterStartContext.receive` false): it sends, another gateway receives */
  sendOnly?: boolean;
}

/** A platform refused or failed a send (one of the error family in src/errors.ts). */
export { DeliveryError } from "../errors.js";

/** What `create` gets from the process edge besides its own config section. */
export interface ChannelDeps {
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the user's home directory, for `~/` in token files */
  homeDir?: string;
  /** the process environment (tokens such as TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** the command menu to register where the platform has one; empty when `commands.native` is off */
  commands: ReadonlyArray<{ name: string; summary: string }>;
}

/** What `switchboard channels login|logout` hands a channel's login hook. */
export interface ChannelLoginRequest {
  config: Config;
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the channel's state on the configured backend (written under the gateway lock: no gateway runs meanwhile) */
  state: ChannelState;
  /** where that state is, for messages: the `state/` folder, or the database (password masked) */
  where: string;
  /** the account to link; "default" when not given */
  accountId?: string;
  /** link with a pairing code for this number (E.164) instead of a QR code */
  pairCode?: string;
  /** prints a line for the person at the terminal (QR codes, codes, progress) */
  print(line: string): void;
  logger: Logger;
}

/** One account of a channel as `switchboard channels status` shows it. */
export interface ChannelAccountState {
  accountId: string;
  linked: boolean;
  connected: boolean;
  /** who the account is on the platform, e.g. "+15551234567" */
  identity?: string;
  lastError?: string;
  /** ms; when the account's credentials were last written */
  credentialsSavedAt?: number;
  /** ms; when the running gateway last recorded this state (undefined: never ran) */
  updatedAt?: number;
}

/**
 * How a channel that links as a device (WhatsApp) instead of using a token links, unlinks and
 * reports its accounts. `login` resolves once linked and throws an Error whose message says what to do.
 */
export interface ChannelLogin {
  login(request: ChannelLoginRequest): Promise<void>;
  logout(request: ChannelLoginRequest): Promise<void>;
  /** `state` is read-only here: a gateway may be running */
  status(request: Pick<ChannelLoginRequest, "config" | "home" | "state">): Promise<ChannelAccountState[]>;
}

/**
 * One channel, whole: its config (id, schema, defaults, per-account fields, how its groups are
 * named), how to create its adapter and, for a channel that links as a device, how to log in. Each
 * adapter exports one from `adapters/<name>/channel.ts`; `adapters/index.ts` lists them, and that
 * table is all the core learns of a channel. A definition loads its platform SDK inside `create` and
 * `login` only, so the CLI can check a config against the table without loading any SDK.
 */
export interface ChannelDefinition<Settings extends SharedAccountSettings = SharedAccountSettings, Section = unknown>
  extends ChannelConfigDefinition<Settings> {
  /** The adapter for a `channels.<id>` section as the schema validated it (present and not disabled). */
  create(section: Section, deps: ChannelDeps): ChannelAdapter | Promise<ChannelAdapter>;
  login?: ChannelLogin;
}
